"""The record store's keys and how it takes batches of banners it may already hold."""

from __future__ import annotations

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
    assert keys(banner, shape) == (banner_key(banner, shape), service_key(shape))


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
