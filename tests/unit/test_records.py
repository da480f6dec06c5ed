"""The record store's keys and how it takes batches of banners it may already hold."""

from __future__ import annotations

import fcntl
import os
import threading

from hypothesis import given
from hypothesis import strategies as st

from spyglass.server.banners.keys import banner_key, keys, service_key
from spyglass.server.banners.shape import BadBanner, normalize
from spyglass.server.index.records import RecordStore
from spyglass.server.index.store import prepare
from tests.unit.test_import_hostile import real_banner

ANY_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8))


FRACTION = st.text("0123456789.Z+:", max_size=10)  # what may follow the seconds of a timestamp


@given(transport=st.one_of(st.just("absent"), ANY_SCALAR), hash_=ANY_SCALAR, fraction=FRACTION)
def test_keys_are_the_banner_and_service_keys_whatever_the_members(transport, hash_, fraction):
    banner = {"ip_str": "192.0.2.7", "port": 443, "timestamp": "2026-05-01T10:00:00" + fraction, "hash": hash_}
    if transport != "absent":
        banner["transport"] = transport
    try:
        shape = normalize(banner)
    except BadBanner:
        return
    assert keys(banner, shape) == (banner_key(banner, shape), service_key(banner, shape))


def test_a_batch_holding_a_stored_banner_adds_only_the_new_ones(tmp_path):
    """A first import does not look keys up; a batch with a banner the store holds is stored again,
    looked up, and keeps every new banner and the current one of each service."""
    records = RecordStore(tmp_path / "banners.db")
    first = [prepare(real_banner(n)) for n in range(5)]
    assert [seq for seq, _, _ in records.add(first)[0]] == [1, 2, 3, 4, 5]
    newer = real_banner(2, timestamp="2026-09-01T00:00:00.000000Z")
    again = [prepare(real_banner(n)) for n in range(5, 8)] + [first[3], prepare(newer)]
    added, demoted = records.add(again)
    assert [(seq, current) for seq, current, _ in added] == [(6, True), (7, True), (8, True), (9, True)]
    assert added[-1][2].key == prepare(newer).key and demoted == records.demoted() == [3]
    assert records.count() == 9 and records.add([first[0]]) == ([], [])
    assert [seq for seq, _, _ in records.add([prepare(real_banner(9))])[0]] == [10]  # new again: stored
    records.close()


def test_keys_stay_those_every_data_dir_holds():
    """Stores hold these keys: blake2b of the members joined by '|', its top 63 bits."""
    import hashlib

    def digest(text: str) -> int:
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") >> 1

    b = {"ip_str": "192.0.2.7", "port": 443, "transport": "tcp", "timestamp": "2026-05-01T10:00:00", "hash": -5}
    shape = normalize(b)
    assert keys(b, shape) == (digest("192.0.2.7|443|tcp|2026-05-01T10:00:00|-5"), digest("192.0.2.7|443|tcp"))


def test_writers_take_turns_by_the_queue_beside_the_file(tmp_path):
    """A batch waits, in the kernel, while another writer holds the queue's lock (another process
    held it here: a lock of another open file), and is stored once it lets go; a batch twice one
    key keeps its first, in order, compressed before the wait."""
    records = RecordStore(tmp_path / "banners.db")
    records.add([prepare(real_banner(n)) for n in range(3)])
    other = os.open(tmp_path / "banners.db-writers", os.O_RDWR)
    fcntl.flock(other, fcntl.LOCK_EX)
    batch = [prepare(real_banner(n)) for n in (3, 4, 3, 5)]
    done: list = []
    writer = threading.Thread(target=lambda: done.append(records.add(batch)))
    writer.start()
    writer.join(0.5)
    assert not done  # it waits for the queue (a writer that did not would be done by now)
    fcntl.flock(other, fcntl.LOCK_UN)
    os.close(other)
    writer.join(30)
    added, _ = done[0]
    assert [(seq, p.key) for seq, _, p in added] == [(4, batch[0].key), (5, batch[1].key), (6, batch[3].key)]
    assert records.count() == 6


def test_a_writer_checkpoints_the_log_after_its_turn_not_within_it(tmp_path, monkeypatch):
    """SQLite's own checkpoint (within the commit, every other writer waiting) is off; the writer
    copies the log after its turn, once it has changed enough rows."""
    from spyglass.server.state.sqlite import database

    monkeypatch.setattr(database._WriterQueue, "CHECKPOINT_ROWS", 5)
    records = RecordStore(tmp_path / "banners.db")
    assert records._db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    other = os.open(tmp_path / "banners.db-writers", os.O_RDWR)
    checkpoints: list[bool] = []  # for each checkpoint: whether the queue was free then

    def seen(statement: str) -> None:
        if "wal_checkpoint" in statement:
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                checkpoints.append(False)
            else:
                fcntl.flock(other, fcntl.LOCK_UN)
                checkpoints.append(True)

    records._db.conn.set_trace_callback(seen)
    records.add([prepare(real_banner(n)) for n in range(2)])  # 4 rows: not yet
    assert checkpoints == []
    records.add([prepare(real_banner(n)) for n in range(2, 4)])
    assert checkpoints == [True]
    os.close(other)


def test_a_private_result_is_a_service_of_its_account_s_own():
    """A private scan result never replaces the banner everyone reads of its port (newcomer trial,
    major 4): its service is its account's; its keys agree with each other as any banner's do."""
    public = {"ip_str": "127.0.0.1", "port": 22, "timestamp": "2026-05-01T10:00:00", "_intel": {"options": {}}}

    def private(account: int, transport: str = "tcp") -> dict:
        options = {"scan": "S", "account": account}
        return {**public, "tags": ["private-scan"], "_intel": {"options": options}, "transport": transport}

    services = {service_key(b, normalize(b)) for b in (public, private(1), private(2))}
    assert len(services) == 3
    for b in (private(1), private(1, "TCP")):
        shape = normalize(b)
        assert keys(b, shape) == (banner_key(b, shape), service_key(b, shape))
