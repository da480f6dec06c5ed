"""A banner replaced by a newer one written in another index shard stays current (searchable) in
its own shard until the newer one is committed in its: a search beside an import never counts a
service out (newcomer trial 18: `port:80` gave 4,553, then 4,489, then 4,782 results)."""

from __future__ import annotations

from spyglass.query import parse_facets, parse_strict
from spyglass.server.index import BannerIndex


def seen(stamp: str, title: str) -> dict:
    return {"ip_str": "192.0.2.1", "port": 80, "transport": "tcp", "timestamp": stamp, "data": "", "title": title}


def current(index: BannerIndex) -> list[str]:
    """The titles of the service's banners a search finds (its current one, in whichever shard)."""
    index.shards.stale()
    _, matches, _ = index.search(parse_strict("net:192.0.2.1/32"), parse_facets(""))
    return [m["title"] for m in matches]


def test_a_banner_replaced_in_another_shard_stays_current_until_the_replacement_is_committed(tmp_path):
    reader, collector, importer = BannerIndex(tmp_path), BannerIndex(tmp_path), BannerIndex(tmp_path)
    try:
        with collector.writing() as writer:  # the old banner, in the shard the collector takes
            writer.add([collector.prepare(seen("2026-10-01T00:00:00", "old"))])
        assert current(reader) == ["old"]
        holding = collector.writing()  # the collector holds its shard (a flush to come)
        holding.__enter__()
        importing = importer.writing()  # the import takes another shard
        imported = importing.__enter__()
        imported.add([importer.prepare(seen("2026-11-01T00:00:00", "new"))])  # stored, not yet committed
        holding.__exit__(None, None, None)  # the collector's flush commits its shard
        assert current(reader) == ["old"]  # still counted: the new one is not searchable yet (was: [])
        importing.__exit__(None, None, None)  # the import commits, then settles the other shard
        assert current(reader) == ["new"]
    finally:
        for index in (reader, collector, importer):
            index.close()


def test_a_banner_replaced_in_another_shard_is_left_out_until_its_own_shard_applies_it(tmp_path):
    """The other order (newcomer trial 19: counts above the final one during an import): the new
    banner is committed while the old one's shard is held by another writer, which has not yet
    re-indexed it; search leaves the old one out meanwhile."""
    reader, collector, importer = BannerIndex(tmp_path), BannerIndex(tmp_path), BannerIndex(tmp_path)
    try:
        with collector.writing() as writer:
            writer.add([collector.prepare(seen("2026-10-01T00:00:00", "old"))])
        holding = collector.writing()  # the old one's shard, held through what follows
        holding.__enter__()
        with importer.writing() as imported:  # another shard: committed, the held one left to its writer
            imported.add([importer.prepare(seen("2026-11-01T00:00:00", "new"))])
            assert current(reader) == ["old"]
        assert reader.records.demoted() and current(reader) == ["new"]  # (was: both)
        total, facets = reader.count(parse_strict("port:80"), parse_facets("port"))
        assert total == 1 and [f["count"] for f in facets["port"]] == [1]
        holding.__exit__(None, None, None)  # its writer applies the demotion at its commit
        assert not reader.records.demoted() and current(reader) == ["new"]
    finally:
        for index in (reader, collector, importer):
            index.close()


def test_a_shard_no_writer_takes_is_read_from_where_it_was_last_looked_at(tmp_path):
    """A shard whose mark lags (the collector's, while an import writes another) has it moved on
    once a look finds nothing of it since: each look read every banner written since its last
    commit (a one-line import took 5 s beside a backend at 6M banners, newcomer trial 29)."""
    collector, importer = BannerIndex(tmp_path), BannerIndex(tmp_path)
    try:
        with collector.writing() as writer:  # shard 0
            writer.add([collector.prepare(seen("2026-10-01T00:00:00", "collected"))])
        assert collector.records.indexed_seq(0) == 1
        with importer.writing(shard=1) as writer:  # it settles the other shards at its end
            writer.add(
                [importer.prepare(dict(seen(f"2026-11-01T00:00:{i:02d}", "imported"), port=i)) for i in range(50)]
            )
        assert importer.records.last_seq() == 51
        assert importer.records.indexed_seq(0) == 51  # was 1: the next look read 50 banners again
        assert importer.records.indexed_seq(1) == 51 and not importer.behind()
    finally:
        for index in (collector, importer):
            index.close()


def test_settling_beside_a_held_shard_ends_once_its_writer_commits(tmp_path):
    """A backend's collector holds its shard while it collects: an import that demoted a banner
    there waited for it to let go (5 s, trial 30), though the collector's next commit applies the
    demotion. It waits for that commit now (here as long as it takes: it never lets go)."""
    import threading

    collector, importer = BannerIndex(tmp_path), BannerIndex(tmp_path)
    try:
        with collector.writing() as writer:
            writer.add([collector.prepare(seen("2026-10-01T00:00:00", "old"))])
        holding = collector.writing()
        held = holding.__enter__()  # held through what follows, as a collecting backend's
        with importer.writing() as imported:
            imported.add([importer.prepare(seen("2026-11-01T00:00:00", "new"))])
        settled = threading.Thread(target=importer.settle, kwargs={"wait": None}, daemon=True)
        settled.start()
        held.add([collector.prepare(dict(seen("2026-11-02T00:00:00", "other"), ip_str="192.0.2.2"))])
        held.commit()  # the collector's next batch: its commit applies the demotion
        settled.join(60)
        assert not settled.is_alive(), "the import waited for the collector to let its shard go"
        assert current(importer) == ["new"] and not importer.records.demoted()
        holding.__exit__(None, None, None)
    finally:
        for index in (collector, importer):
            index.close()
