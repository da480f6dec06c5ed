"""``spyglass state copy``: an embedded backend's state (its SQLite files in --data) into a fresh
PostgreSQL state, so the backends that share it take over its accounts, keys, credits,
organizations, scans, saved queries, alerts, notifiers and their deliveries as they are.

Rows keep their ids (a scan's account, a vote's query), keys stay digests (a key that worked on the
embedded backend works on every backend of the shared state), and the whole copy is one
transaction: a copy that fails leaves the shared state as it was. Like stores.py, this module knows
both implementations: it opens the SQLite stores first, which brings their files to this
spyglass's layout, then reads their tables as they stand.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from spyglass.server.state.postgres.connect import connect_once, row_of, shown
from spyglass.server.state.postgres.schema import init_schema

# (SQLite file in the data dir, tables in the order their references need). The lease columns of
# scans are left out: no backend runs a copied scan yet, the first to claim it resumes it.
TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("spyglass.db", ("accounts", "api_keys", "organizations", "org_members", "org_invitations")),
    ("scans.db", ("scans",)),
    ("directory.db", ("queries", "query_tags", "query_votes")),
    # banners held for matching are not copied: the embedded backend matched them or will
    ("alerts.db", ("alerts", "alert_triggers", "alert_ignores", "notifiers", "alert_notifiers")),
    ("alerts.db", ("deliveries", "delivery_log")),  # (a line each: the tuple is long)
)
NOT_COPIED = {"owner", "lease_until"}  # scans: which backend holds it, here none
SERIAL_IDS = ("accounts", "queries", "deliveries", "delivery_log")  # their next id must come after the copied ones


class StateNotEmpty(ValueError):
    """The PostgreSQL state holds accounts, scans, saved queries or alerts already."""


@dataclass
class Copied:
    tables: dict[str, int]  # rows copied, by table


def _open_sqlite_stores(data_dir: Path) -> None:
    """Open and close each embedded store: its file exists, at this spyglass's layout."""
    from spyglass.server.state.sqlite.accounts import Store
    from spyglass.server.state.sqlite.alerts import AlertStore
    from spyglass.server.state.sqlite.directory import Directory
    from spyglass.server.state.sqlite.scans import ScanStore

    for opened in (Store(data_dir), ScanStore(data_dir), Directory(data_dir), AlertStore(data_dir)):
        opened.close()


def copy_state(data_dir: Path, url: str) -> Copied:
    """Copy the embedded state in ``data_dir`` into the PostgreSQL state at ``url`` (created or
    upgraded first). :class:`StateNotEmpty` when it holds accounts, scans, saved queries or alerts."""
    if not (data_dir / "spyglass.db").exists():
        raise FileNotFoundError(f"{data_dir} holds no embedded backend's state (no spyglass.db)")
    _open_sqlite_stores(data_dir)
    init_schema(url)
    copied: dict[str, int] = {}
    with connect_once(url) as pg, pg.transaction():
        held = row_of(
            pg.execute(
                "SELECT (SELECT count(*) FROM accounts) + (SELECT count(*) FROM scans)"
                " + (SELECT count(*) FROM queries WHERE owner IS NOT NULL) + (SELECT count(*) FROM alerts) AS n"
            )
        )
        if held["n"]:
            raise StateNotEmpty(f"the state at {shown(url)} holds accounts, scans, saved queries or alerts already")
        pg.execute("DELETE FROM queries")  # the starting set: the data dir's copy of it replaces it
        for filename, tables in TABLES:
            with sqlite3.connect(f"file:{data_dir / filename}?mode=ro", uri=True) as lite:
                lite.row_factory = sqlite3.Row
                for table in tables:
                    copied[table] = _copy_table(lite, pg, table)
        for table in SERIAL_IDS:  # table names are our constants; values go as parameters
            after = f"(SELECT coalesce(max(id), 0) + 1 FROM {table})"
            pg.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), {after}, false)")
    return Copied(copied)


def _copy_table(lite: sqlite3.Connection, pg, table: str) -> int:
    types = {
        r["column_name"]: r["data_type"]
        for r in pg.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s", (table,)
        )
    }
    rows = lite.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
    if not rows:
        return 0
    columns = [c for c in rows[0].keys() if c in types and c not in NOT_COPIED]
    booleans = {c for c in columns if types[c] == "boolean"}  # SQLite keeps them as 0 and 1
    insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})"
    with pg.cursor() as cur:
        cur.executemany(insert, [[bool(r[c]) if c in booleans else r[c] for c in columns] for r in rows])
    return len(rows)
