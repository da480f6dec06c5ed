"""``spyglass import`` of what is not a regular file: standard input (``masscan -oJ - | spyglass
import -``) and a pipe (``<(zcat scans.gz)``), read once from their start, their format known by
their first bytes as a file's is."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.workflows.commands import spyglass

pytestmark = pytest.mark.external  # spyglass commands as processes

NMAP = Path(__file__).parents[1] / "formats/data/nmap-loopback.xml"


def import_stdin(data: Path, body: bytes, *files: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spyglass", "import", "--data", str(data), *(files or ["-"])],
        input=body.decode("latin-1"),
        encoding="latin-1",
        capture_output=True,
        timeout=300,
    )


def test_gzip_nmap_on_standard_input_is_known_and_loaded(tmp_path):
    done = import_stdin(tmp_path / "data", gzip.compress(NMAP.read_bytes()))
    assert done.returncode == 0, done.stderr
    assert "import: stdin: nmap, 6 read, 6 new, 0 bad, 1 host seen" in done.stdout + done.stderr


def test_a_named_pipe_of_banner_lines_loads_what_the_file_holds(tmp_path):
    """Longer than the head read to know the format: the head is given again before the rest."""
    lines = tmp_path / "banners.json"
    spyglass("generate", "--count", "3000", "--seed", "7", "-o", str(lines))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    feeder = threading.Thread(target=lambda: fifo.write_bytes(lines.read_bytes()))
    feeder.start()
    done = spyglass("import", "--data", str(tmp_path / "data"), str(fifo))
    feeder.join()
    assert f"import: {fifo}: banner JSON lines, 3,000 read, 3,000 new, 0 bad" in done.stdout + done.stderr
    again = spyglass("import", "--data", str(tmp_path / "data"), str(lines))
    assert "3,000 read, 0 new, 3,000 already there" in again.stdout + again.stderr


def test_a_truncated_gzip_on_standard_input_says_so_and_keeps_what_was_read(tmp_path):
    lines = tmp_path / "banners.json"
    spyglass("generate", "--count", "200", "--seed", "8", "-o", str(lines))
    whole = gzip.compress(lines.read_bytes())
    done = import_stdin(tmp_path / "data", whole[: len(whole) * 2 // 3])
    assert done.returncode == 2
    assert "import: -: it ends early (a truncated gzip file?)" in done.stderr


def test_standard_input_given_twice_is_refused(tmp_path):
    done = import_stdin(tmp_path / "data", b"", "-", "-")
    assert done.returncode == 2 and "'-' (standard input) can be read once" in done.stderr
