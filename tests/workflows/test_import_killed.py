"""``kill -9`` in the middle of ``spyglass import`` into a data dir a backend serves: the backend
goes on answering, the import's workers do not outlive it, and the same import run again leaves
the backend answering what a clean import of the file answers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.contract.test_guard import serve
from tests.workflows.commands import spyglass

pytestmark = pytest.mark.external  # spyglass commands as processes


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.timeout(900)  # three imports of 60,000 banners and a backend on a busy 2-core machine
def test_an_import_killed_part_way_and_run_again(tmp_path):
    dump, data, clean = tmp_path / "banners.json.gz", tmp_path / "served", tmp_path / "clean"
    spyglass("generate", "--count", "60000", "--seed", "4", "-o", str(dump))
    spyglass("import", "--data", str(clean), str(dump))
    expected = spyglass("--data", str(clean), "count", "port:80").stdout
    key = spyglass("keys", "create", "--data", str(data), "--plan", "member").stdout.strip()
    with serve(data) as url:
        importing = subprocess.Popen(
            [sys.executable, "-m", "spyglass", "import", "--data", str(data), str(dump)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while importing.poll() is None and time.monotonic() < deadline:
            if (data / "banners.db").exists() and (data / "banners.db").stat().st_size > 2_000_000:
                break
            time.sleep(0.05)
        workers = children(importing.pid)
        os.kill(importing.pid, signal.SIGKILL)  # the import alone, as `kill -9 PID` does
        importing.wait()
        answer = httpx.get(f"{url}/intel/host/count", params={"key": key, "query": "port:80"}, timeout=30)
        assert answer.status_code == 200, answer.text
        deadline = time.monotonic() + 60
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [w for w in workers if alive(w)], "the killed import's workers outlived it"
        spyglass("import", "--data", str(data), str(dump))
        deadline, counted = time.monotonic() + 30, ""
        while counted != expected and time.monotonic() < deadline:  # every worker sees it within a second
            counted = spyglass("--data", str(data), "count", "port:80").stdout
        assert counted == expected


# The import, its progress held (after a batch is stored) until the process is signalled.
HELD_IMPORT = """
import sys, time
from spyglass.cli import main
from spyglass.server.ingest import importer

real = importer.import_files

def held(*args, progress=None, **kwargs):
    def report(*a, **k):
        if progress is not None:
            progress(*a, **k)
        print("held", file=sys.stderr, flush=True)
        time.sleep(3600)
    return real(*args, progress=report, **kwargs)

importer.import_files = held
sys.exit(main(sys.argv[1:]))
"""


def test_kill_stops_an_import_as_ctrl_c_does(tmp_path):
    """`kill PID` (SIGTERM) printed only multiprocessing's leaked-semaphore warning and no word of
    what was kept (newcomer trial 22): it stops the import as ctrl+c does."""
    dump, data = tmp_path / "banners.json.gz", tmp_path / "data"
    spyglass("generate", "--count", "3000", "--seed", "4", "-o", str(dump))
    importing = subprocess.Popen(
        [sys.executable, "-c", HELD_IMPORT, "import", "--data", str(data), str(dump)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert importing.stderr is not None
    assert importing.stderr.readline().strip().endswith("held")  # a batch stored, the import held
    importing.send_signal(signal.SIGTERM)
    said = importing.stderr.read()
    assert importing.wait(timeout=120) == 128 + signal.SIGTERM
    assert said.strip().splitlines()[-1] == (
        "spyglass: stopped: what was stored so far is kept; the same command adds the rest"
    )
    assert "Traceback" not in said and "leaked" not in said, said
    assert "already there" in spyglass("import", "--data", str(data), str(dump)).stderr
