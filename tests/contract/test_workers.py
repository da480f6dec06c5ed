"""``spyglass serve --workers 2`` as a process on loopback: credits stay exact when two processes
charge the same account at once, a reader hands writes to the primary, every worker sees new
banners in search and on its stream, the primary is started again when it dies, and the caller's
address cannot be claimed through the header the workers use between themselves."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from spyglass.datagen import generate
from spyglass.server.index import BannerIndex
from spyglass.server.ingest.importer import import_banners
from spyglass.server.state.sqlite.accounts import Store

pytestmark = pytest.mark.external  # spyglass serve --workers, as processes

WAIT = 60.0  # seconds: a loaded machine starts processes slowly (never a measure, only a bound)


@contextmanager
def serve_workers(data_dir: Path, workers: int = 2) -> Iterator[tuple[str, subprocess.Popen]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "spyglass", "serve", "--data", str(data_dir), "--port", "0", "--workers", str(workers)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("main"), first + (process.stderr.read() if process.stderr else "")
        url = first.split()[1]
        wait_for_workers(url, workers)
        yield url, process
    finally:
        process.terminate()
        process.wait(30)


def fresh_get(url: str, **params) -> httpx.Response:
    """A request on a connection of its own: the kernel hands it to whichever worker accepts."""
    with httpx.Client(timeout=30) as http:
        return http.get(url, params=params)


def wait_for_workers(url: str, workers: int) -> None:
    seen: set[str] = set()
    deadline = time.monotonic() + WAIT
    while len(seen) < workers:
        assert time.monotonic() < deadline, f"only workers {seen} answered"
        try:
            seen.add(fresh_get(f"{url}/api-info").headers["x-spyglass-worker"])
        except httpx.TransportError:
            time.sleep(0.1)


@pytest.fixture
def data_dir(tmp_path) -> Path:
    data = tmp_path / "data"
    index = BannerIndex(data)
    import_banners(index, generate(500, seed=3))
    index.close()
    return data


def account(data_dir: Path, plan: str, credits: int | None = None, collector: bool = False) -> str:
    store = Store(data_dir)
    try:
        acct, key = store.create_account(f"user-{plan}-{credits}", plan, collector=collector)
        if credits is not None:
            store.set_credits(acct.id, query=credits)
        return key
    finally:
        store.close()


def test_credits_are_exact_when_two_workers_charge_one_account_at_once(data_dir):
    key = account(data_dir, "member", credits=40)
    with serve_workers(data_dir) as (url, _):

        async def searches() -> list[httpx.Response]:
            # a connection per request, so both workers take a share of them; one past the plan's
            # requests at once (429) is sent again, as is one whose connection the server closed
            # before it read the request (its wait for a request ran out on a loaded machine: nothing
            # was charged, which the count below would show)
            async def one(i: int) -> httpx.Response:
                while True:
                    async with httpx.AsyncClient(timeout=60) as http:
                        try:
                            answer = await http.get(
                                f"{url}/intel/host/search", params={"key": key, "query": f"port:{i}"}
                            )
                        except httpx.RemoteProtocolError:
                            continue
                    if answer.status_code != 429:
                        return answer
                    await asyncio.sleep(0.01)

            return await asyncio.gather(*(one(i) for i in range(100)))

        answers = asyncio.run(searches())
        assert {a.headers["x-spyglass-worker"] for a in answers} == {"0", "1"}
        assert sorted({a.status_code for a in answers}) == [200, 402]
        assert sum(a.status_code == 200 for a in answers) == 40  # none spent twice, none lost
        left = fresh_get(f"{url}/api-info", key=key).json()["query_credits"]
        assert left == 0


def banner(n: int) -> dict:
    return {
        "ip_str": f"127.0.9.{n}",
        "port": 8000 + n,
        "transport": "tcp",
        "timestamp": "2026-11-25T09:00:00.000000",
        "data": f"worker test {n}",
    }


def a_stream_on_each_worker(streams: httpx.Client, url: str, key: str, workers: int = 2) -> dict[str, httpx.Response]:
    """An open stream of banners on each worker, by its number (the kernel hands each new
    connection to whichever worker accepts: open until every one has one)."""
    opened: dict[str, httpx.Response] = {}
    deadline = time.monotonic() + WAIT
    while len(opened) < workers:
        assert time.monotonic() < deadline
        response = streams.send(
            streams.build_request("GET", f"{url}/stream/intel/banners", params={"key": key}), stream=True
        )
        worker = response.headers["x-spyglass-worker"]
        if worker in opened:
            response.close()
        else:
            opened[worker] = response
    return opened


def test_a_reader_hands_a_write_to_the_primary_and_every_worker_sees_the_banner(data_dir):
    key = account(data_dir, "enterprise", collector=True)
    with serve_workers(data_dir) as (url, _), httpx.Client(timeout=30) as streams:
        opened = a_stream_on_each_worker(streams, url, key)
        # replay banners until one was taken by the reader and carried out by the primary
        via: list[str] = []
        n = 0
        while "1>0" not in via:
            n += 1
            assert n < 100, via
            with httpx.Client(timeout=60) as http:
                sent = http.post(f"{url}/spyglass/collect", params={"key": key}, content=json.dumps(banner(n)))
            assert sent.status_code == 200, sent.text
            via.append(sent.headers["x-spyglass-worker"])
        deadline = time.monotonic() + WAIT
        for worker, stream in opened.items():
            got = []
            for line in stream.iter_lines():  # a keep-alive line comes at least every 15 s
                assert time.monotonic() < deadline, f"worker {worker}'s stream carried only {got}"
                if line.strip():
                    got.append(json.loads(line)["data"])
                if len(got) == n:
                    break
            assert got == [f"worker test {i}" for i in range(1, n + 1)], worker
            stream.close()
        found: dict[str, int] = {}
        deadline = time.monotonic() + WAIT
        while set(found) != {"0", "1"} or 0 in found.values():  # a reader's index reloads within a second
            assert time.monotonic() < deadline, found
            answer = fresh_get(f"{url}/intel/host/count", key=key, query=f"port:{8000 + n}")
            found[answer.headers["x-spyglass-worker"]] = answer.json()["total"]
            time.sleep(0.05)


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def primary_of(supervisor: int) -> int:
    """The worker that holds sockets of the primary's Unix socket path (the readers' ends of
    their connections to it have no path)."""
    rows = Path("/proc/net/unix").read_text().splitlines()[1:]
    inodes = {f"socket:[{row.split()[6]}]" for row in rows if row.endswith("primary.sock")}
    for pid in children(supervisor):
        fds = Path(f"/proc/{pid}/fd")
        if any(os.readlink(fds / fd) in inodes for fd in os.listdir(fds)):
            return pid
    raise AssertionError("no worker holds the primary's socket")


def test_a_primary_that_dies_is_started_again_and_the_readers_follow_it(data_dir):
    key = account(data_dir, "enterprise", collector=True)
    with serve_workers(data_dir) as (url, process):
        primary = primary_of(process.pid)
        os.kill(primary, signal.SIGKILL)
        deadline = time.monotonic() + WAIT
        while True:  # writes answer 503 with Retry-After while it starts, then work again
            assert time.monotonic() < deadline
            with httpx.Client(timeout=60) as http:
                try:
                    sent = http.post(f"{url}/spyglass/collect", params={"key": key}, content=json.dumps(banner(200)))
                except httpx.TransportError:
                    continue
            if sent.status_code == 200:
                break
            assert sent.status_code == 503 and sent.headers["retry-after"], sent.text
            time.sleep(0.2)
        assert process.poll() is None
        assert primary not in children(process.pid)


def test_a_caller_cannot_claim_another_address_through_the_workers_header(data_dir):
    key = account(data_dir, "member")
    with serve_workers(data_dir) as (url, _):
        seen = set()
        for _ in range(40):
            with httpx.Client(timeout=30) as http:
                answer = http.get(
                    f"{url}/tools/myip", params={"key": key}, headers={"x-spyglass-client": "203.0.113.9 1"}
                )
            seen.add(answer.headers["x-spyglass-worker"])
            assert answer.json() == "127.0.0.1"
        assert seen == {"0", "1"}


def test_workers_need_a_number_and_the_whole_backend(tmp_path):
    for args in (["--workers", "0"], ["--workers", "2", "--geonet-only"]):
        done = subprocess.run(
            [sys.executable, "-m", "spyglass", "serve", "--data", str(tmp_path), "--port", "0", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2
        assert "--workers takes a number of 1 or more" in done.stderr


def test_a_reader_refuses_a_body_past_what_any_method_takes_without_holding_it(data_dir):
    key = account(data_dir, "enterprise", collector=True)
    big = b"x" * (16 * 1024 * 1024 + 1)
    with serve_workers(data_dir) as (url, _):
        answered: set[str] = set()
        for _ in range(40):  # until a reader took one
            with httpx.Client(timeout=60) as http:
                answer = http.post(f"{url}/spyglass/collect", params={"key": key}, content=big)
            assert answer.status_code == 413, answer.text
            assert "16 MiB" in answer.json()["error"]
            answered.add(answer.headers["x-spyglass-worker"])
            if "1" in answered:
                break
        assert "1" in answered


def test_workers_stop_when_their_supervisor_is_killed(data_dir):
    with serve_workers(data_dir) as (_, process):
        workers = children(process.pid)
        assert len(workers) >= 2
        process.kill()
        process.wait()
        deadline = time.monotonic() + WAIT
        while any(Path(f"/proc/{pid}").exists() and "Z" not in state(pid) for pid in workers):
            assert time.monotonic() < deadline, "a worker outlived its supervisor"
            time.sleep(0.2)


def state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_workers_stopped_while_streams_are_followed_end_them_without_a_traceback(data_dir):
    """Stopping `serve --workers 2` with a stream open on each worker: the primary's shutdown
    looked for the stream hub on its wrapper (PrimaryWorker has no state) and logged an
    AttributeError traceback for every stream."""
    key = account(data_dir, "enterprise")
    with serve_workers(data_dir) as (url, process), httpx.Client(timeout=30) as streams:
        _held = a_stream_on_each_worker(streams, url, key)  # open while the server stops
        process.terminate()
        assert process.wait(WAIT) == 0
        assert process.stderr is not None
        said = process.stderr.read()
        assert "Traceback" not in said and "AttributeError" not in said, said
