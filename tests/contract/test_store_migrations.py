"""Schema versions of the store's SQLite files: a data dir of the previous version opens intact."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys

import pytest

from spyglass.server.state.sqlite.accounts import MIGRATIONS, Store
from spyglass.server.state.sqlite.database import SchemaTooNew, connect, migrate, schema_version, statements

# spyglass.db exactly as 0.1.0 wrote it: these tables, no user_version (0).
V0_LAYOUT = """
CREATE TABLE IF NOT EXISTS accounts (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    email TEXT,
    display_name TEXT,
    created TEXT NOT NULL,
    plan TEXT NOT NULL,
    researcher INTEGER NOT NULL DEFAULT 0,
    query_credits INTEGER NOT NULL,
    scan_credits INTEGER NOT NULL,
    period TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
    key TEXT PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    created TEXT NOT NULL
);
"""


def test_a_data_dir_of_version_0_opens_with_keys_and_credits_intact(tmp_path):
    period = Store(tmp_path / "probe").clock().strftime("%Y-%m")  # this month: no reset muddles credits
    old = sqlite3.connect(tmp_path / "spyglass.db")
    old.executescript(V0_LAYOUT)
    old.execute(
        "INSERT INTO accounts VALUES (7, 'alice', 'a@example.test', 'Alice', '2025-06-01T10:00:00.000000',"
        " 'member', 1, 42, 9, ?)",
        (period,),
    )
    old.execute("INSERT INTO api_keys VALUES ('k' || hex(randomblob(15)), 7, '2025-06-01T10:00:00.000000')")
    old.commit()
    key = old.execute("SELECT key FROM api_keys").fetchone()[0]
    assert schema_version(old) == 0
    old.close()

    store = Store(tmp_path)
    account = store.account_for_key(key)
    assert (account.id, account.username, account.display_name, account.plan.name, account.researcher) == (
        7,
        "alice",
        "Alice",
        "member",
        True,
    )
    assert (account.query_credits, account.scan_credits) == (42, 9)
    assert store.charge(account.id, query=2).query_credits == 40
    assert schema_version(store._db.conn) == len(MIGRATIONS)
    store.close()
    assert Store(tmp_path).account(7).query_credits == 40  # reopening at the current version changes nothing


def test_steps_run_in_order_in_one_transaction(tmp_path):
    path = tmp_path / "x.db"
    broken = ["CREATE TABLE a (x)", "CREATE TABLE b (y);\nINSERT INTO nowhere VALUES (1);"]
    with pytest.raises(sqlite3.OperationalError):
        connect(path, synchronous="FULL", migrations=broken)
    db = sqlite3.connect(path)
    assert schema_version(db) == 0  # nothing of step 1 or 2 stayed
    assert db.execute("SELECT name FROM sqlite_master").fetchall() == []
    db.close()

    steps = [
        "CREATE TABLE a (x);\nINSERT INTO a VALUES (1);",
        lambda db: db.execute("INSERT INTO a SELECT x + 1 FROM a"),
        "-- a comment\nALTER TABLE a ADD COLUMN y DEFAULT 'z';",
    ]
    db = connect(path, synchronous="FULL", migrations=steps[:2])
    assert schema_version(db) == 2 and db.execute("SELECT x FROM a ORDER BY x").fetchall() == [(1,), (2,)]
    assert migrate(db, steps) == 3  # only the new step runs
    assert db.execute("SELECT x, y FROM a ORDER BY x").fetchall() == [(1, "z"), (2, "z")]
    db.close()


def test_a_file_from_a_newer_spyglass_is_refused(tmp_path):
    path = tmp_path / "spyglass.db"
    db = sqlite3.connect(path)
    newer = len(MIGRATIONS) + 1
    db.execute(f"PRAGMA user_version={newer}")
    db.close()
    with pytest.raises(SchemaTooNew, match=f"version {newer}"):
        Store(tmp_path)


def test_statements_split_on_complete_statements_only():
    script = "CREATE TRIGGER t AFTER INSERT ON a BEGIN\n  UPDATE a SET x = 1;\nEND;\nSELECT ';';\n-- end\n"
    assert statements(script) == [
        "CREATE TRIGGER t AFTER INSERT ON a BEGIN\n  UPDATE a SET x = 1;\nEND;",
        "SELECT ';';",
    ]
    assert statements("SELECT 1") == ["SELECT 1"]
    with pytest.raises(ValueError):
        statements("SELECT 'unterminated")


def test_a_data_dir_of_version_1_gains_organizations(tmp_path):
    db = connect(tmp_path / "spyglass.db", synchronous="FULL", migrations=MIGRATIONS[:1])
    db.execute(
        "INSERT INTO accounts VALUES (3, 'ann', 'Ann@Example.test', NULL, '2025-06-01T10:00:00.000000',"
        " 'enterprise', 0, 5, 5, '2025-06')"
    )
    db.close()
    store = Store(tmp_path)
    assert schema_version(store._db.conn) == len(MIGRATIONS)
    ann = store.find_account("ann@example.TEST")
    assert ann is not None and ann.id == 3
    assert store.organization_of(3) is None
    org = store.own_organization(ann)
    assert [a.username for a in org.admins] == ["ann"] and org.domains == ["example.test"]
    store.close()


def spyglass(*args: str) -> subprocess.CompletedProcess:
    """A command run as a user runs it; a backend that starts stops at once (stdin ends)."""
    return subprocess.run(
        [sys.executable, "-m", "spyglass", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def serve_once(data) -> subprocess.CompletedProcess:
    return spyglass("serve", "--data", str(data), "--port", "0", "--exit-on-stdin-eof")


@pytest.mark.external
@pytest.mark.parametrize("name", ["spyglass.db", "banners.db", "alerts.db", "scans.db", "datasets.db", "directory.db"])
def test_a_damaged_database_is_one_line_naming_it_and_what_to_do(tmp_path, name):
    """A corrupt database at start: exit 2 and one line, not a traceback that names no file, nor
    a backend that starts and fails every request that needs it (directory.db was opened late)."""
    Store(tmp_path).close()
    (tmp_path / name).write_bytes(b"this is not a database" * 300)
    run = serve_once(tmp_path)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and str(tmp_path / name) in lines[0] and "backup" in lines[0], run.stderr


@pytest.mark.external
@pytest.mark.parametrize("loss", ["deleted", "emptied"])
@pytest.mark.parametrize("name", ["spyglass.db", "banners.db"])
def test_a_lost_database_is_refused_where_the_data_dir_says_it_held_something(tmp_path, name, loss):
    """spyglass.db gone or zero-length beside alerts.db and local.key, or banners.db beside an
    index of banners: exit 2 and one line naming it, not a start with every key invalid or no
    banner left. A data dir that never held it (import alone, then keys create) is no loss."""
    from spyglass.datagen import generate
    from spyglass.server.index import BannerIndex
    from spyglass.server.ingest.importer import import_banners
    from spyglass.server.state.sqlite.alerts import AlertStore

    index = BannerIndex(tmp_path)
    import_banners(index, generate(50, seed=2))
    index.close()
    if name == "spyglass.db":
        assert spyglass("keys", "create", "--data", str(tmp_path)).returncode == 0  # banners first: fine
        store = Store(tmp_path)
        store.local_key()
        store.close()
        AlertStore(tmp_path).close()
    lost = tmp_path / name
    lost.unlink() if loss == "deleted" else lost.write_bytes(b"")
    run = serve_once(tmp_path)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and str(lost) in lines[0] and "backup" in lines[0], run.stderr


@pytest.fixture
def small_disk(tmp_path):
    """A filesystem of 512 KiB of its own (tmpfs), and a way to fill it to the last byte."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(disk)], capture_output=True).returncode:
        pytest.skip("mounting a tmpfs is not permitted here")

    def fill() -> None:
        with contextlib.suppress(OSError), open(disk / "filler", "wb", buffering=0) as fh:
            while True:
                fh.write(b"\0" * 4096)

    try:
        yield disk, fill
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


@pytest.mark.external
@pytest.mark.parametrize("state", ["fresh", "in use"])
def test_a_full_disk_at_start_is_said_so_in_one_line(small_disk, state):
    """serve and keys create on a full disk: one line that names the data dir and says the disk is
    full, a non-zero exit, no traceback, and never the advice to move a database aside."""
    disk, fill = small_disk
    data = disk / "data"
    if state == "in use":
        Store(data).create_key()
    fill()
    for run in (serve_once(data), spyglass("keys", "create", "--data", str(data))):
        lines = run.stderr.strip().splitlines()
        assert run.returncode not in (0, 2) and len(lines) == 1, run.stderr
        assert str(data) in lines[0] and "disk" in lines[0] and "full" in lines[0], lines[0]
        assert "aside" not in lines[0] and "damaged" not in lines[0]
    if state == "in use":
        (disk / "filler").unlink()
        assert len(Store(data)._db.read("SELECT * FROM api_keys")) == 1  # as it was


def test_a_damaged_index_is_rebuilt_from_the_records(tmp_path, caplog):
    from spyglass.datagen import generate
    from spyglass.query import parse_strict
    from spyglass.server.index import BannerIndex
    from spyglass.server.ingest.importer import import_banners

    index = BannerIndex(tmp_path)
    import_banners(index, generate(500, seed=4))
    expected = index.count(parse_strict("port:22"), [])[0]
    index.close()
    for part in (tmp_path / "index").rglob("*.term"):  # (in its shard's folder)
        part.write_bytes(b"\0" * 64)
    with caplog.at_level("WARNING", logger="spyglass.index"):
        again = BannerIndex(tmp_path)
    assert "rebuilding it from the records" in caplog.text
    assert again.total() == 500 and again.count(parse_strict("port:22"), [])[0] == expected
    again.close()
