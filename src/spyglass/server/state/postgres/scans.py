"""Scans on PostgreSQL: the :class:`~spyglass.server.state.scans.ScanState` that several backends
share (written once, in state/sql/scans.py). A claim takes the oldest claimable scan with ``FOR
UPDATE SKIP LOCKED``, so two backends claiming at once take two different scans (or one takes it
and the other none); leases are on the server's clock, so the backends' clocks need not agree."""

from __future__ import annotations

from spyglass.server.state.postgres.connect import Pool
from spyglass.server.state.postgres.schema import init_schema
from spyglass.server.state.sql.scans import SqlScans


class PostgresScans(SqlScans):
    """Thread-safe (a pool); every write is one statement or one transaction."""

    _db: Pool

    NOW = "now()"
    UNTIL = "now() + make_interval(secs => ?)"
    CLAIMING = " FOR UPDATE SKIP LOCKED"

    def _times(self, lease: float) -> tuple[list[float], list[float]]:
        return [], [lease]

    def __init__(self, url: str) -> None:
        init_schema(url)
        self._db = Pool(url)
