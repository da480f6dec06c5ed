"""import's exit status and messages on real files: 0 all loaded, 1 some lines bad, 2 nothing
loaded or a file that cannot be read to its end (each a one-line error saying how much loaded)."""

from __future__ import annotations

import gzip
import json

import orjson
import pytest

from spyglass.cli import main
from spyglass.server.index.records import RecordStore

pytestmark = pytest.mark.external  # spyglass import as a process, unshare (most tests)


def banner(n: int) -> bytes:
    return orjson.dumps(
        {
            "ip_str": f"198.18.{n // 250}.{n % 250 + 1}",
            "port": 80,
            "hash": n,
            "timestamp": "2026-01-01T00:00:00.000000",
            "data": "HTTP/1.1 200 OK",
        }
    )


def lines(count: int, start: int = 0) -> bytes:
    return b"".join(banner(n) + b"\n" for n in range(start, start + count))


def stored(data) -> int:
    records = RecordStore(data / "banners.db")
    try:
        return records.count()
    finally:
        records.close()


def errors(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("spyglass: ")]


def test_all_good_exits_0(tmp_path, capsys):
    source = tmp_path / "good.json.gz"
    source.write_bytes(gzip.compress(lines(50)))
    assert main(["import", "--data", str(tmp_path / "d"), str(source)]) == 0
    assert not errors(capsys) and stored(tmp_path / "d") == 50


def test_some_bad_lines_exit_1_with_counts_and_the_first_bad_lines(tmp_path, capsys):
    source = tmp_path / "mixed.json"
    bad = [b"[1, 2", b'{"ip_str": "198.18.0.1"}', b'"a string"'] * 5  # 15 bad lines
    source.write_bytes(lines(20) + b"\n".join(bad) + b"\n")
    assert main(["import", "--data", str(tmp_path / "d"), str(source)]) == 1
    err = capsys.readouterr().err
    assert "35 read, 20 new, 0 already there, 15 bad" in err
    assert "mixed.json:21: not JSON" in err and "mixed.json:22: no valid port" in err
    assert "mixed.json:23: not a JSON object" in err
    assert "… and 5 more bad lines" in err  # the first ten are listed
    assert stored(tmp_path / "d") == 20


def test_json_gives_a_script_the_counts_on_stdout(tmp_path, capsys):
    """--json: the counts a script needs on stdout (newcomer trial 29 had to read them from stderr)."""
    good, mixed = tmp_path / "good.json.gz", tmp_path / "mixed.json"
    good.write_bytes(gzip.compress(lines(30)))
    mixed.write_bytes(lines(10) + b"not json\n" + lines(5, start=30))
    assert main(["import", "--data", str(tmp_path / "d"), str(good), str(mixed), "--json"]) == 1
    out = capsys.readouterr()
    said = json.loads(out.out)
    assert {k: said[k] for k in ("read", "new", "already_there", "bad", "exit_status")} == {
        "read": 46,
        "new": 35,
        "already_there": 10,
        "bad": 1,
        "exit_status": 1,
    }
    assert [(f["name"], f["read"], f["new"], f["already_there"], f["bad"], f["complete"]) for f in said["files"]] == [
        ("good.json.gz", 30, 30, 0, 0, True),
        ("mixed.json", 16, 5, 10, 1, True),
    ]
    assert len(said["problems"]) == 1 and said["problems"][0].startswith("mixed.json:11: not JSON")
    assert "46 read, 35 new, 10 already there, 1 bad" in out.err  # the words stay on stderr


def test_only_bad_lines_exit_2(tmp_path, capsys):
    source = tmp_path / "bad.json"
    source.write_bytes(b"not json\n{}\n[]\n")
    assert main(["import", "--data", str(tmp_path / "d"), str(source)]) == 2
    err = errors(capsys)
    assert err == ["spyglass: import: nothing loaded: every line was bad: a banner file holds one JSON object a line"]


def test_an_empty_file_loads_nothing_and_exits_2(tmp_path, capsys):
    source = tmp_path / "empty.json"
    source.write_bytes(b"")
    assert main(["import", "--data", str(tmp_path / "d"), str(source)]) == 2
    assert errors(capsys) == ["spyglass: import: nothing loaded: no banners in the file"]


def test_a_missing_file_exits_2(tmp_path, capsys):
    assert main(["import", "--data", str(tmp_path / "d"), str(tmp_path / "nope.json")]) == 2
    assert errors(capsys) == [f"spyglass: import: no such file: {tmp_path / 'nope.json'}"]


def test_a_directory_is_said_to_be_one(tmp_path, capsys):
    """'no such file: /home/x/www' for a folder that is there (newcomer trial, minor 13)."""
    assert main(["import", "--data", str(tmp_path / "d"), str(tmp_path)]) == 2
    assert errors(capsys) == [f"spyglass: import: {tmp_path}: a directory; give the files in it (DIR/*)"]


def test_ctrl_c_says_what_the_import_kept_and_how_to_go_on(tmp_path, capsys, monkeypatch):
    """Ctrl+C ended an import, an export or a scan's wait with nothing said (newcomer trial, minor 8)."""
    from spyglass.server.ingest import importer

    def interrupted(*_, **__):
        raise KeyboardInterrupt

    monkeypatch.setattr(importer, "import_files", interrupted)
    source = tmp_path / "good.json"
    source.write_bytes(lines(5))
    assert main(["import", "--data", str(tmp_path / "d"), str(source)]) == 130
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said == "spyglass: stopped: what was stored so far is kept; the same command adds the rest"


def test_a_truncated_gz_is_one_line_saying_how_much_loaded(tmp_path, capsys):
    whole = gzip.compress(lines(30_000), compresslevel=1)
    source = tmp_path / "cut.json.gz"
    source.write_bytes(whole[: len(whole) * 9 // 10])
    data = tmp_path / "d"
    assert main(["import", "--data", str(data), str(source)]) == 2
    err = errors(capsys)
    assert len(err) == 1 and "cut.json.gz: it ends early (a truncated gzip file?)" in err[0]
    loaded = int(err[0].split("; ")[1].split(" new banners")[0].replace(",", ""))
    assert 0 < loaded < 30_000 and loaded == stored(data)


@pytest.mark.parametrize(
    "body, why",
    [
        (b"\x1f\x8b\x09garbage that is not deflate\n", "it is not a gzip file"),
        (
            gzip.compress(lines(200))[:40] + b"\xff" * 64 + gzip.compress(lines(200))[104:],
            "its compressed data is corrupt",
        ),
    ],
    ids=["bad-header", "corrupt-deflate"],
)
def test_a_gz_that_is_not_gzip_is_one_line(tmp_path, capsys, body, why):
    source = tmp_path / "odd.json.gz"
    source.write_bytes(body)
    assert main(["import", "--data", str(tmp_path / "d"), str(source)]) == 2
    err = errors(capsys)
    assert len(err) == 1 and f"odd.json.gz: {why}" in err[0] and "0 new banners from it" in err[0]


def test_a_broken_file_among_good_ones_spoils_nothing_else(tmp_path, capsys):
    good, cut = tmp_path / "a.json", tmp_path / "b.json.gz"
    good.write_bytes(lines(30, start=1000))
    cut.write_bytes(gzip.compress(lines(30))[:-12])
    assert main(["import", "--data", str(tmp_path / "d"), str(good), str(cut)]) == 2
    assert len(errors(capsys)) == 1
    assert stored(tmp_path / "d") >= 30


def test_an_unreadable_file_is_one_line(tmp_path, capsys):
    import os

    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    source = tmp_path / "locked.json"
    source.write_bytes(lines(3))
    source.chmod(0)
    assert main(["import", "--data", str(tmp_path / "d"), str(source)]) == 2
    assert "locked.json: Permission denied" in errors(capsys)[0]


def test_a_full_disk_stops_the_import_in_words_and_exit_2(tmp_path):
    """On a 3 MB file system of its own (a mount namespace made for the test): what filled it, how
    many banners are stored, what to do; exit 2, not a tantivy worker's message and exit 1."""
    import shutil
    import subprocess
    import sys

    from spyglass.datagen import generate

    if not shutil.which("unshare"):
        pytest.skip("no unshare here to make a small file system")
    source = tmp_path / "in.json"
    source.write_text("".join(json.dumps(b) + "\n" for b in generate(20_000, seed=1)))
    small = tmp_path / "small"
    small.mkdir()
    script = (
        f"mount -t tmpfs -o size=3M tmpfs {small} || exit 99; "
        f"{sys.executable} -m spyglass import --data {small}/data {source}"
    )
    run = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=300)
    if run.returncode == 99 or "unshare" in run.stderr[:200]:
        pytest.skip(f"cannot make a small file system here: {run.stderr.strip()[:200]}")
    assert run.returncode == 2, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert f"no space left on {small}/data" in last and "banners are stored" in last and "again" in last


async def test_a_full_disk_on_the_server_is_507_with_an_error_body():
    import errno

    import httpx
    from fastapi import FastAPI

    from spyglass.server.errors import install_error_handlers

    app = FastAPI()
    install_error_handlers(app)

    @app.get("/write")
    def write() -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        answer = await client.get("/write")
    assert answer.status_code == 507 and "disk is full" in answer.json()["error"]


def test_a_line_that_is_not_json_says_where_it_breaks(tmp_path, capsys):
    source = tmp_path / "broken.json"
    good = json.dumps({"ip_str": "198.18.0.1", "port": 22, "timestamp": "2025-01-01T00:00:00", "data": "x" * 300})
    broken = good[:-1] + ', "unquoted": oops}'  # the JSON breaks at "oops"
    source.write_text(f"{good}\n{broken}\n")
    assert main(["import", "--data", str(tmp_path / "d"), str(source)]) == 1
    err = capsys.readouterr().err
    assert f"broken.json:2: not JSON (Expecting value at column {broken.index('oops') + 1})" in err


def test_a_killed_import_leaves_no_python_warning_under_the_prompt(tmp_path):
    """kill -9 of an import: multiprocessing's resource tracker frees the import's semaphores without
    a Python warning on the user's terminal (newcomer trial 29: "UserWarning: resource_tracker: There
    appear to be 6 leaked semaphore objects to clean up at shutdown", with a source path)."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    command = [sys.executable, "-m", "spyglass", "--data", str(tmp_path / "d"), "import", "-"]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdin is not None and child.stderr is not None
    child.stdin.write(lines(100))  # and the pipe stays open: the import waits for more
    child.stdin.flush()
    deadline = time.monotonic() + 120
    children: list[str] = []
    while len(children) < 2:  # the resource tracker and a worker: the queues' semaphores exist
        assert time.monotonic() < deadline and child.poll() is None, "the import's processes never started"
        tasks = Path(f"/proc/{child.pid}/task")
        children = [c for t in tasks.iterdir() for c in (t / "children").read_text().split()]
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    said = child.stderr.read().decode()  # to its end: when the tracker, the last to hold it, exits
    child.stdin.close()
    assert "Warning" not in said and "resource_tracker" not in said, said
