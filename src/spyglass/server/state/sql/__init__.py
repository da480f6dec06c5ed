"""Each state (accounts, alerts, scans, the directory) written once, in SQL both SQLite and
PostgreSQL run, over :mod:`.db`'s seam: SQLite's :class:`~spyglass.server.state.sqlite.database.Database` and
PostgreSQL's :class:`~spyglass.server.state.postgres.connect.Pool` implement it, and each store's own
module keeps only its schema and what truly differs (PostgreSQL's row locks and server clock,
SQLite's ``data_version``). Only the standard library is imported here."""
