"""The durable store: accounts, keys, plans, credits and the monthly reset."""

from __future__ import annotations

from datetime import datetime

import pytest

from spyglass.server.state.accounts import NoCreditsLeft
from spyglass.server.state.sqlite.accounts import Store


def test_charges_are_atomic_and_never_negative(tmp_path):
    store = Store(tmp_path)
    account, _ = store.create_account("a", "member")
    store.charge(account.id, query=99)
    with pytest.raises(NoCreditsLeft):
        store.charge(account.id, query=2)
    assert store.account(account.id).query_credits == 1
    with pytest.raises(NoCreditsLeft):
        store.charge(account.id, query=1, scan=101)  # short on scan: nothing spent
    assert store.account(account.id).query_credits == 1


def test_concurrent_charges_spend_each_credit_exactly_once(tmp_path):
    """Charges commit without waiting for the disk, still one at a time: none lost, none twice."""
    from concurrent.futures import ThreadPoolExecutor

    store = Store(tmp_path)
    account, _ = store.create_account("racer", plan="member")
    store.set_credits(account.id, query=300)

    def spend(_: int) -> bool:
        try:
            store.charge(account.id, query=1)
        except NoCreditsLeft:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        spent = sum(pool.map(spend, range(400)))
    assert spent == 300 and store.account(account.id).query_credits == 0
    # an account or key written after a charge is again committed durably (synchronous=FULL)
    assert store._db.one("PRAGMA synchronous")[0] == 2
    store.close()
    assert Store(tmp_path).account(account.id).query_credits == 0


def test_survives_restart(tmp_path):
    store = Store(tmp_path)
    key = store.create_key("member")
    account = store.account_for_key(key)
    store.charge(account.id, scan=10)
    store.close()
    again = Store(tmp_path)
    assert again.account_for_key(key).scan_credits == 90
    assert again.local_key() == again.local_key()


def test_monthly_reset(tmp_path):
    now = [datetime(2026, 1, 31, 23, 59)]
    store = Store(tmp_path, clock=lambda: now[0])
    account, key = store.create_account("a", "member")
    store.charge(account.id, query=100, scan=5)
    assert store.account_for_key(key).query_credits == 0
    now[0] = datetime(2026, 2, 1, 0, 1)
    refreshed = store.account_for_key(key)
    assert (refreshed.query_credits, refreshed.scan_credits) == (100, 100)


def test_local_account_is_enterprise_researcher(tmp_path):
    store = Store(tmp_path)
    account = store.account_for_key(store.local_key())
    assert account.plan.name == "enterprise" and account.researcher


def test_keys_are_kept_as_digests_and_the_local_key_in_a_private_file(tmp_path):
    import stat

    store = Store(tmp_path)
    member = store.create_key("member")
    local = store.local_key()
    assert store.account_for_key(member) is not None and store.local_key() == local
    store.close()
    everything = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name != "local.key" and p.is_file())
    assert member.encode() not in everything and local.encode() not in everything
    key_file = tmp_path / "local.key"
    assert key_file.read_text() == local and stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_a_store_with_keys_in_plain_text_is_migrated(tmp_path):
    """A store of the layout before digests: its keys still work, none stays in the file, and the
    local account's key moves to local.key."""
    import sqlite3

    from spyglass.server.state.accounts import key_digest

    store = Store(tmp_path)
    member = store.create_key("member")
    local = store.local_key()
    store.close()
    (tmp_path / "local.key").unlink()
    with sqlite3.connect(tmp_path / "spyglass.db") as db:  # back to plain keys at version 2
        for key in (member, local):
            db.execute("UPDATE api_keys SET key = ? WHERE key = ?", (key, key_digest(key)))
        db.execute("DROP TABLE org_invitations")  # not in that layout
        db.execute("ALTER TABLE accounts DROP COLUMN collector")
        db.execute("PRAGMA user_version = 2")
    again = Store(tmp_path)
    assert again.account_for_key(member) is not None and again.local_key() == local
    again.close()
    assert member.encode() not in (tmp_path / "spyglass.db").read_bytes()


@pytest.mark.external
def test_a_data_dir_is_private_whoever_creates_it_first(tmp_path):
    """``keys create`` on a fresh data dir (a process with the usual umask 022, unlike serve and
    import): the dir 0700 and spyglass.db 0600; and a database opened by any store, with its
    -wal and -shm files while it is open, 0600 too."""
    import os
    import stat
    import subprocess
    import sys

    from spyglass.server.state.sqlite.scans import ScanStore

    def modes(folder):
        return {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}

    data = tmp_path / "keys"
    run = subprocess.run(
        [sys.executable, "-m", "spyglass", "keys", "create", "--data", str(data)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.umask(0o022),
    )
    assert run.returncode == 0, run.stderr
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert modes(data) == dict.fromkeys(modes(data), 0o600) and "spyglass.db" in modes(data)

    old = os.umask(0o022)
    try:
        store, scans = Store(tmp_path / "open"), ScanStore(tmp_path / "open")
        store.create_key()
        opened = modes(tmp_path / "open")
        store.close()
        scans.close()
    finally:
        os.umask(old)
    assert {"spyglass.db-wal", "spyglass.db-shm", "scans.db-wal"} <= set(opened)
    assert opened == dict.fromkeys(opened, 0o600)


def test_making_a_data_dir_private_passes_over_files_removed_meanwhile(tmp_path, monkeypatch):
    """A backend renames and removes files (a bulk-data file's .partial) while another process that
    opens the data dir (the CLI attaching to it) makes it private: what is gone is passed over."""
    from spyglass.server.state import datadir as sqlite

    (tmp_path / "kept").write_text("x")
    listed = [(str(tmp_path), [], ["kept", ".gone.json.gz.partial"])]
    monkeypatch.setattr(sqlite.os, "walk", lambda _: iter(listed))
    sqlite.make_private(tmp_path)
    assert (tmp_path / "kept").stat().st_mode & 0o777 == 0o600
