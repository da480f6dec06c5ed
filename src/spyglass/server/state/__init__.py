"""The backend's state beside its banners: the interfaces every state store implements, and what
they share. SQLite in the data dir (server/store.py) is the embedded default; PostgreSQL
(server/postgres/) lets several backends be one service. No implementation imports another;
server/stores.py is the one place that knows them all."""
