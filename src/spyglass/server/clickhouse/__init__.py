"""The banner store on ClickHouse, for a team whose data outgrows one machine: one server or a
sharded cluster, chosen with ``serve --store clickhouse://HOST:PORT/DATABASE``. The embedded store
(:mod:`spyglass.server.index`) stays the default."""

from spyglass.server.clickhouse.connection import StoreURLError, shown
from spyglass.server.clickhouse.store import ClickHouseStore

__all__ = ["ClickHouseStore", "StoreURLError", "shown"]
