"""What keeps a long-running backend's memory flat (bench/memory.py measures it over time): a
small page cache where the record store is served and the big one only while a bulk load runs,
and few glibc arenas for the heap that each collector flush's writer threads free."""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import pytest

from spyglass.datagen import generate
from spyglass.server.index import records
from spyglass.server.index.store import BannerIndex
from spyglass.server.ingest.importer import import_files
from tests.conftest import start_backend

MB = 1024  # KiB, as PRAGMA cache_size counts when negative


def cache_size(store: BannerIndex) -> int:
    return store.records._db.conn.execute("PRAGMA cache_size").fetchone()[0]


def test_a_served_record_store_keeps_a_small_page_cache(tmp_path):
    """It was 256 MB, filled by whatever reads touched for as long as the backend ran."""
    server, backend = start_backend(tmp_path)
    with server:
        cache = cache_size(backend.app.state.banners)
    backend.store.close()
    assert cache < 0 and -cache <= 16 * MB


@pytest.mark.external
def test_a_bulk_load_takes_the_big_cache_and_an_import_leaves_the_served_store_the_small_one(tmp_path):
    """The import's workers write, each in a bulk load of its own; the store of the process that
    started the import (a backend's, the CLI's) keeps its small cache throughout."""
    dump = tmp_path / "banners.json"
    dump.write_text("".join(json.dumps(b) + "\n" for b in generate(2000, seed=3)))
    store = BannerIndex(tmp_path / "data")
    seen: list[int] = []
    try:
        with store.bulk_load():
            bulk = cache_size(store)
        import_files(store, [dump], progress=lambda *_: seen.append(cache_size(store)), workers=1)
        after = cache_size(store)
        assert store.total() == 2000
    finally:
        store.close()
    assert bulk == records.BULK_CACHE
    assert seen and set(seen) == {records.SERVING_CACHE} and after == records.SERVING_CACHE


# A store written as the collector writes it (a writer each flush), in a fresh process set up as
# serve sets itself up: its heap's growth, in MB.
COLLECTING = """
import sys, tempfile
from pathlib import Path
from spyglass.datagen import generate
from spyglass.server.demostore import unpack
from spyglass.server.index.store import BannerIndex, prepare
from spyglass.server.process import prepare_process

def anon():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("RssAnon")) / 1024

prepare_process()
data = Path(tempfile.mkdtemp())
unpack(data)
store = BannerIndex(data)
banners = [prepare(b) for b in generate(3000, seed=9)]
start = anon()
for i in range(60):
    with store.writing() as writer:
        writer.add(banners[i * 50 : (i + 1) * 50])
print(anon() - start)
"""


@pytest.mark.external
@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's arenas")
def test_a_collecting_store_does_not_spread_its_heap_over_arenas(tmp_path):
    """60 flushes: +120-190 MB of heap kept in a fresh arena after another, ~30 MB with two."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": ":".join(sys.path)}
    done = subprocess.run([sys.executable, "-c", COLLECTING], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) < 70, done.stdout
