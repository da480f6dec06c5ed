"""The demo store shipped in the wheel: what a first start opens instead of generating and
importing the demo banners. It must be exactly what this version builds, and be used."""

from __future__ import annotations

import sqlite3
import tarfile
from pathlib import Path

import httpx
import pytest

from spyglass.query import parse_facets, parse_strict
from spyglass.server.demostore import DEMO_BANNERS, PACKED, build, unpack
from spyglass.server.index.records import MIGRATIONS
from spyglass.server.index.store import SCHEMA_VERSION, BannerIndex
from tests.contract.test_guard import serve
from tests.workflows.commands import spyglass

QUERIES = ["port:443", "port:22", "product:OpenSSH", "country:DE has_ssl:true", "nginx", "-port:80 org:Harbor"]
FACETS = "port,country,org,product:20"


def files(folder: Path) -> dict[str, int]:
    """Every file under ``folder`` (the index's shards' too) by its name, with its size."""
    return {p.name: p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.name.endswith(".lock")}


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> tuple[Path, Path]:
    shipped, built = tmp_path_factory.mktemp("shipped"), tmp_path_factory.mktemp("built")
    assert unpack(shipped)
    build(built)
    return shipped, built


def test_the_shipped_store_is_of_this_version_layout(stores):
    """Opened as it is, never migrated or re-indexed: else a first start pays for a rebuild (run
    scripts/make_demo_store.py)."""
    shipped, _ = stores
    db = sqlite3.connect(shipped / "banners.db")
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        meta = dict(db.execute("SELECT name, value FROM meta"))
    finally:
        db.close()
    assert meta["schema_version"] == SCHEMA_VERSION and meta["demo"] == "1"
    assert meta["indexed_seq:0"] == str(DEMO_BANNERS)
    before = files(shipped / "index")
    store = BannerIndex(shipped)
    try:
        assert not store.behind() and store.total() > 0
    finally:
        store.close()
    assert files(shipped / "index") == before  # the index was opened, not rebuilt


def test_the_shipped_store_holds_what_this_version_builds(stores):
    """The same banners (generate(DEMO_BANNERS, seed=1), byte for byte), dictionary and answers."""
    opened = [BannerIndex(path) for path in stores]
    try:
        shipped, built = opened
        assert shipped.records.count() == built.records.count() == DEMO_BANNERS
        seqs = list(range(1, DEMO_BANNERS + 1))
        assert shipped.records.raw_bodies(seqs) == built.records.raw_bodies(seqs)
        assert shipped.records.dictionary() == built.records.dictionary()
        for text in QUERIES:
            query, facets = parse_strict(text), parse_facets(FACETS)
            assert shipped.count(query, facets) == built.count(query, facets), text
            assert shipped.search(query, facets) == built.search(query, facets), text
        assert shipped.host("198.18.232.198") == built.host("198.18.232.198")
    finally:
        for store in opened:
            store.close()


@pytest.mark.external
def test_a_first_start_opens_the_shipped_store(tmp_path):
    """``serve --demo`` on a fresh data dir serves the shipped index (its segments, by name) rather
    than generating and importing the demo banners."""
    data = tmp_path / "data"
    key = spyglass("keys", "create", "--data", str(data), "--plan", "enterprise").stdout.strip()
    with tarfile.open(PACKED) as tar:
        segments = {Path(m.name).name for m in tar.getmembers() if m.name.startswith("index/") and m.isfile()}
    with serve(data, "--demo") as url:
        found = httpx.get(f"{url}/intel/host/search", params={"key": key, "query": "port:22"}, timeout=60)
        assert found.status_code == 200 and found.json()["total"] > 0, found.text
        assert segments <= set(files(data / "index"))


def test_a_damaged_archive_leaves_the_data_dir_to_the_import(tmp_path):
    damaged = tmp_path / "demo-store.tar.xz"
    damaged.write_bytes(PACKED.read_bytes()[: PACKED.stat().st_size // 2])
    data = tmp_path / "data"
    assert not unpack(data, damaged)
    assert list(data.iterdir()) == []  # nothing half-placed: seed_demo_data imports as before


def test_a_data_dir_with_banners_is_left_alone(tmp_path):
    (tmp_path / "banners.db").write_bytes(b"")
    assert not unpack(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["banners.db"]
