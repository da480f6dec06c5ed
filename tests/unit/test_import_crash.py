"""kill -9 in the middle of an import: what the records committed is searchable after the next
open, no worker outlives the import, and running the import again completes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from spyglass.datagen import generate
from spyglass.query import parse_strict
from spyglass.server.index import BannerIndex
from spyglass.server.ingest.importer import import_files

COUNT = 3000
# The importer in a child process, with small batches and commits so that kill points fall
# between known batches: it reports each batch and, at the chosen one, waits to be killed.
SCRIPT = """
import sys
from pathlib import Path
from spyglass.server.ingest import importer
from spyglass.server.index import store
importer.BLOCK, importer.BATCH, store.COMMIT_EVERY = 200_000, 100, 500
kill_at, seen = int(sys.argv[3]), [0]

def progress(done, total, report):
    seen[0] += 1
    print(seen[0], report.added, flush=True)
    if seen[0] == kill_at:
        sys.stdin.readline()  # hold here until killed

index = store.BannerIndex(Path(sys.argv[1]))
importer.import_files(index, [Path(sys.argv[2])], progress=progress, workers=2)
print("done", flush=True)
"""


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    path = tmp_path_factory.mktemp("crash") / "export.json"
    path.write_bytes(b"\n".join(orjson.dumps(b) for b in generate(COUNT, seed=11)) + b"\n")
    return path


def descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in found:
                    found.add(child)
                    todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def wait_until(condition, limit: float = 30.0) -> bool:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def agree(index: BannerIndex) -> None:
    """Host lookup and search see exactly what the records hold."""
    stored = [b for batch in index.records.since(0) for _, b in batch]
    assert index.total() == len(stored)
    services = {(b["ip_str"], b["port"], b.get("transport", "tcp")) for b in stored}
    assert index.count(parse_strict("net:198.18.0.0/15"), [])[0] == len(services)
    for ip in {b["ip_str"] for b in stored[:: max(1, len(stored) // 20)]}:
        assert len(index.host(ip)) == sum(b["ip_str"] == ip for b in stored)


@pytest.mark.external
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("kill_at", [1, 4, 9])
def test_an_import_killed_mid_way_leaves_searchable_data_and_no_processes(tmp_path, export, kill_at):
    data = tmp_path / "data"
    child = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(data), str(export), str(kill_at)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    for _ in range(kill_at):
        line = child.stdout.readline()
        assert line.split()[0].isdigit(), line
    helpers = descendants(child.pid)
    assert helpers  # the parsing workers (and multiprocessing's resource tracker)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    child.stdout.close()
    child.stdin.close()
    assert wait_until(lambda: not any(alive(p) for p in helpers)), [p for p in helpers if alive(p)]

    index = BannerIndex(data)  # opening catches the index up with the records
    stored = index.records.count()
    assert stored >= int(line.split()[1]) > 0
    agree(index)
    report = import_files(index, [export], workers=1)
    assert (report.read, report.bad) == (COUNT, 0) and report.added == COUNT - stored
    assert index.records.count() == index.total() == COUNT
    agree(index)
    index.close()


@pytest.mark.external
def test_an_import_run_to_the_end_in_a_child_says_done(tmp_path, export):
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), str(export), "0"], capture_output=True, text=True, check=True
    )
    assert result.stdout.splitlines()[-1] == "done"
    index = BannerIndex(tmp_path)
    assert index.total() == COUNT and not index.behind()
    index.close()
