"""The real-time stream against the real backend under uvicorn: each filter in both formats,
the enterprise rule, debug events for a slow reader, keep-alives, the replay method, and the
client and the CLI reconnecting through backend restarts."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import itertools
import json
import os
import select
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from ipaddress import ip_address

import httpx
import pytest

from spyglass.backoff import Backoff
from spyglass.client import Clients, StreamDebug
from spyglass.client.errors import AuthenticationError, BadRequest, Forbidden
from spyglass.datagen import NETWORK
from spyglass.server.stream.hub import QUEUE_BYTES, QUEUE_LIMIT
from tests.conftest import start_backend

_serial = itertools.count(1)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def banner(port: int = 80, asn: str = "AS100", cc: str = "NL", vulns: list[str] | None = None) -> dict:
    """A banner the index has never seen (its own address and timestamp)."""
    n = next(_serial)
    b = {
        "ip_str": f"198.18.{n // 250}.{n % 250 + 1}",
        "port": port,
        "transport": "tcp",
        "timestamp": (T0 + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%S.%f"),
        "asn": asn,
        "org": f"Org {n}",
        "location": {"country_code": cc},
        "data": "hello\n",
    }
    if vulns:
        b["vulns"] = {v: {"verified": False, "cvss": "5.0", "summary": "s", "references": []} for v in vulns}
    return b


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server, backend = start_backend(tmp_path_factory.mktemp("stream"))
    with server:
        yield backend
    backend.store.close()


@pytest.fixture
async def clients(served):
    async with Clients.from_profile(served.profile(served.key(collector=True))) as c:
        yield c


async def connected(stream, timeout: float = 10.0) -> asyncio.Task:
    """Start reading ``stream`` in a task; return once the server has subscribed it."""
    items: list = []

    async def read() -> list:
        async for item in stream:
            items.append(item)
        return items

    task = asyncio.create_task(read())
    task.items = items  # type: ignore[attr-defined]
    deadline = time.monotonic() + timeout
    while stream.state.status != "connected":
        if task.done():
            task.result()  # raises what the stream raised
        assert time.monotonic() < deadline, f"stream not connected: {stream.state}"
        await asyncio.sleep(0.02)
    return task


async def wait_for(task: asyncio.Task, count: int, timeout: float = 15.0) -> list:
    deadline = time.monotonic() + timeout
    while len(task.items) < count:  # type: ignore[attr-defined]
        if task.done():
            task.result()
        assert time.monotonic() < deadline, f"got {len(task.items)} of {count}"  # type: ignore[attr-defined]
        await asyncio.sleep(0.02)
    return task.items  # type: ignore[attr-defined]


FILTERS = [
    ("banners", (), lambda b: True),
    ("asn", (["AS200", "300"],), lambda b: b["asn"] in ("AS200", "AS300")),
    ("countries", ("de,JP",), lambda b: b["location"]["country_code"] in ("DE", "JP")),
    ("ports", ([22, 8080],), lambda b: b["port"] in (22, 8080)),
    ("vulns", ("cve-2021-41773",), lambda b: "CVE-2021-41773" in b.get("vulns", {})),
]


@pytest.mark.parametrize("fmt", ["json", "sse"])
@pytest.mark.parametrize(("method", "args", "wanted"), FILTERS, ids=[f[0] for f in FILTERS])
async def test_each_filter_delivers_exactly_its_banners(served, clients, fmt, method, args, wanted):
    stream = getattr(clients.stream, method)(*args, fmt=fmt, reconnect=False)
    task = await connected(stream)
    mixed = [
        banner(),
        banner(port=22, asn="AS200", cc="DE"),
        banner(port=443, asn="AS300", cc="US", vulns=["CVE-2021-41773"]),
        banner(port=8080, cc="JP"),
        banner(asn="AS999", cc="FR", vulns=["CVE-2014-0160"]),
        banner(port=22, asn="AS300", cc="JP", vulns=["CVE-2021-41773"]),  # matches every filter: last
    ]
    await asyncio.to_thread(served.collect, mixed)
    expected = [b for b in mixed if wanted(b)]
    got = await wait_for(task, len(expected))
    task.cancel()
    assert [(b.address, b.port) for b in got] == [(b["ip_str"], b["port"]) for b in expected]
    assert all(b["_id"] for b in got)  # every stream item carries _id
    assert [b.model().port for b in got] == [b["port"] for b in expected]


async def test_raw_mode_gives_the_json_bytes(served, clients):
    stream = clients.stream.banners(raw=True, reconnect=False)
    task = await connected(stream)
    sent = banner(port=2222)
    await asyncio.to_thread(served.collect, [sent])
    (line,) = await wait_for(task, 1)
    task.cancel()
    assert isinstance(line, bytes) and json.loads(line)["port"] == 2222


async def test_leaving_a_loop_without_closing_the_stream_is_clean(served):
    """``break`` out of ``async for`` without ``async with``: the abandoned stream is closed by the
    garbage collector, quietly, and its connection ends."""
    import gc

    loop = asyncio.get_running_loop()
    problems: list[dict] = []
    loop.set_exception_handler(lambda _loop, context: problems.append(context))
    hub = served.app.state.hub
    before = len(hub.subscriptions)
    async with Clients.from_profile(served.profile(served.key())) as c:
        openers = [
            c.stream.banners,
            c.stream.banners,
            lambda: c.stream.ports([2223]),
            lambda: c.stream.banners(raw=True),
        ]
        for opener in openers:
            follow = opener()
            reading = asyncio.create_task(anext(aiter(follow)))
            while len(hub.subscriptions) == before:  # subscribed: now publish what it waits for
                await asyncio.sleep(0.02)
            await asyncio.to_thread(served.collect, [banner(port=2223)])
            await asyncio.wait_for(reading, 15)
            del follow, reading
            gc.collect()
            deadline = time.monotonic() + 10
            while len(hub.subscriptions) != before:  # the abandoned stream's connection ended
                assert time.monotonic() < deadline, "the abandoned stream stayed subscribed"
                await asyncio.sleep(0.02)
    gc.collect()
    await asyncio.sleep(0.2)
    assert problems == []


async def test_a_plan_without_the_stream_gets_403_and_no_key_401(served):
    for plan in ("free", "member"):
        async with Clients.from_profile(served.profile(served.key(plan))) as c:
            with pytest.raises(Forbidden, match="enterprise"):
                async for _ in c.stream.banners():  # reconnecting cannot help: raised at once
                    pass
    raw = httpx.get(f"{served.url}/stream/intel/banners", params={"key": served.key("free")})
    assert raw.status_code == 403 and set(raw.json()) == {"error"}
    async with Clients.from_profile(served.profile(None)) as c:
        with pytest.raises(AuthenticationError):
            async for _ in c.stream.banners():
                pass


async def test_a_bad_filter_is_400(served, clients):
    with pytest.raises(BadRequest, match="ports"):
        async for _ in clients.stream.ports("http"):
            pass
    with pytest.raises(BadRequest, match="countries"):
        async for _ in clients.stream.countries("NLD"):
            pass
    # a value holding a slash is refused as the value it is (it once redirected: HTTP 307)
    for kind, value in [("ports", "22/"), ("asn", "AS1/2"), ("countries", "NL/"), ("vulns", "CVE-1/")]:
        with pytest.raises(BadRequest, match=kind):
            async for _ in getattr(clients.stream, kind)(value):
                pass


async def test_a_slow_reader_loses_banners_and_is_told_how_many(served, clients):
    hub = served.app.state.hub
    hub.queue_limit = 5
    try:
        stream = clients.stream.banners(debug=True, reconnect=False)
        task = await connected(stream)
    finally:
        hub.queue_limit = QUEUE_LIMIT  # this subscription keeps its 5; the others are not affected
    # One batch of 40 is published at once, before the reader can take any: 35 are dropped.
    burst = [banner(port=9000 + i) for i in range(40)]
    await asyncio.to_thread(served.collect, burst)
    got = await wait_for(task, 6)
    task.cancel()
    assert got[0] == StreamDebug(35)
    assert [b.port for b in got[1:]] == [9035, 9036, 9037, 9038, 9039]  # the newest are kept
    assert stream.discarded == 35


async def test_a_reader_keeping_up_gets_every_banner_of_a_large_batch(served, clients):
    """A collect body's banners are published at once: a reader's queue holds them all."""
    stream = clients.stream.banners(debug=True, reconnect=False)
    task = await connected(stream)
    burst = [banner(port=20000 + i) for i in range(6000)]
    await asyncio.to_thread(served.collect, burst)
    got = await wait_for(task, 6000, timeout=120)
    task.cancel()
    assert stream.discarded == 0 and not [b for b in got if isinstance(b, StreamDebug)]


async def test_a_reader_s_queue_is_bounded_in_bytes_and_written_a_chunk_at_a_time(served, clients):
    """Big banners are dropped by the bytes they hold, the oldest first, and counted."""
    hub = served.app.state.hub
    hub.queue_bytes = 200_000
    try:
        stream = clients.stream.banners(debug=True, reconnect=False)
        task = await connected(stream)
    finally:
        hub.queue_bytes = QUEUE_BYTES
    (sub,) = [s for s in hub.subscriptions if s.budget == 200_000]
    burst = [{**banner(port=9100 + i), "data": "x" * 60_000} for i in range(10)]  # 600 KB at once
    await asyncio.to_thread(served.collect, burst)
    got = await wait_for(task, 4)
    task.cancel()
    assert got[0] == StreamDebug(7) and [b.port for b in got[1:]] == [9107, 9108, 9109]
    assert sub.queued_bytes == 0


async def test_one_key_follows_at_most_eight_streams(served):
    key = served.key()
    url = f"{served.url}/stream/intel/banners"
    async with httpx.AsyncClient(timeout=10) as http, contextlib.AsyncExitStack() as streams:
        for _ in range(8):
            opened = await streams.enter_async_context(http.stream("GET", url, params={"key": key}))
            assert opened.status_code == 200
        ninth = await http.get(url, params={"key": key})
        other = await streams.enter_async_context(http.stream("GET", url, params={"key": served.key()}))
        assert other.status_code == 200  # another key is not held back
    assert ninth.status_code == 429 and "8 streams" in ninth.json()["error"] and ninth.headers["retry-after"]


async def test_no_debug_events_unless_asked(served, clients):
    hub = served.app.state.hub
    hub.queue_limit = 2
    try:
        stream = clients.stream.banners(reconnect=False)
        task = await connected(stream)
    finally:
        hub.queue_limit = QUEUE_LIMIT
    await asyncio.to_thread(served.collect, [banner(port=7000 + i) for i in range(10)])
    got = await wait_for(task, 2)
    await asyncio.sleep(0.3)
    task.cancel()
    assert [b.port for b in got] == [7008, 7009]


async def test_keep_alives_hold_a_quiet_stream_open(served, clients):
    hub = served.app.state.hub
    hub.heartbeat = 0.1
    try:
        states = []
        for fmt in ("json", "sse"):
            stream = clients.stream.ports([1], fmt=fmt, silence=1.0, on_state=states.append)
            task = await connected(stream)
            await asyncio.sleep(1.5)  # no banner past the silence limit: only keep-alives (every 0.1 s)
            await asyncio.to_thread(served.collect, [banner(port=1)])
            (got,) = await wait_for(task, 1)
            task.cancel()
            assert got.port == 1
        assert [s.status for s in states if s.status != "closed"] == ["connected", "connected"]
    finally:
        hub.heartbeat = 15.0


async def test_silence_past_the_limit_counts_as_a_drop(served, clients):
    hub = served.app.state.hub
    hub.heartbeat = 60.0
    states = []
    try:
        stream = clients.stream.banners(
            silence=0.5, backoff=Backoff(base=0.05, cap=30.0, jitter=0.5), on_state=states.append
        )
        task = await connected(stream)
        deadline = time.monotonic() + 10
        while not any(s.status == "reconnecting" for s in states):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        task.cancel()
    finally:
        hub.heartbeat = 15.0
    dropped = next(s for s in states if s.status == "reconnecting")
    assert "did not answer" in dropped.reason and dropped.retry_in <= 0.05


async def test_replay_method_publishes_through_the_collector(served, clients):
    stream = clients.stream.ports([4444], reconnect=False)
    task = await connected(stream)
    lines = [json.dumps(banner(port=4444)).encode() for _ in range(3)]
    from spyglass.client.stream import collect

    result = await collect(clients.transport, lines)
    assert (result.received, result.collected) == (3, 3)
    again = await collect(clients.transport, lines)  # already collected: nothing new, nothing published
    assert (again.received, again.collected) == (3, 0)
    got = await wait_for(task, 3)
    task.cancel()
    assert [b.port for b in got] == [4444] * 3
    raw = httpx.post(f"{served.url}/spyglass/collect", params={"key": served.key(collector=True)}, content=b"[1]\n")
    assert raw.status_code == 400 and "line 1" in raw.json()["error"]  # nothing to store at all
    for key in (served.key("member"), served.key()):  # an enterprise key alone may not collect
        raw = httpx.post(f"{served.url}/spyglass/collect", params={"key": key}, content=lines[0])
        assert raw.status_code == 403 and "collector role" in raw.json()["error"]


def test_a_bad_line_in_a_collected_body_is_skipped_and_the_rest_stored(served):
    """As `spyglass import` does: a line nested past what can be read, one that is not JSON and one
    that is not an object are reported; the banners around them are stored."""
    good = [banner(port=4500 + i) for i in range(2)]
    deep = b'{"ip_str":"198.18.9.9","port":1,"transport":"tcp","timestamp":"2026-01-01T00:00:00","x":'
    deep += b"[" * 100_000 + b"]" * 100_000 + b"}"
    body = b"\n".join([json.dumps(good[0]).encode(), deep, b"{oops", b"[1]", json.dumps(good[1]).encode()])
    key = served.key(collector=True)
    answer = httpx.post(f"{served.url}/spyglass/collect", params={"key": key}, content=body, timeout=30)
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert (result["received"], result["collected"], result["bad"]) == (2, 2, 3)
    assert [p.split(":")[0] for p in result["problems"]] == ["line 2", "line 3", "line 4"]
    assert "nested too deeply" in result["problems"][0]


# -- through restarts --------------------------------------------------------------------------


class Restartable:
    """The backend on a fixed port and data dir, killed and started again as a user would."""

    def __init__(self, data_dir) -> None:
        self.data_dir = data_dir
        self.server, self.backend = start_backend(data_dir)
        self.port = self.server.port
        self.key = self.backend.key()
        self.server.__enter__()

    def restart(self) -> None:
        self.stop()
        self.restart_stopped()

    def restart_stopped(self) -> None:
        self.server, self.backend = start_backend(self.data_dir, port=self.port)
        self.server.__enter__()
        self.running = True

    def stop(self) -> None:
        if not getattr(self, "running", True):
            return
        self.running = False
        self.server.__exit__(None, None, None)
        self.backend.store.close()
        self.backend.app.state.banners.close()


async def test_the_client_reconnects_through_several_restarts(tmp_path):
    """Slow (about 5 s): each of the three restarts waits out the server's 1 s graceful stop."""
    live = Restartable(tmp_path)
    states = []
    try:
        async with Clients.from_profile(live.backend.profile(live.key)) as c:
            stream = c.stream.banners(backoff=Backoff(base=0.05, cap=0.5, jitter=0.5), on_state=states.append)
            task = await connected(stream)
            for round_ in range(3):
                await asyncio.to_thread(live.backend.collect, [banner(port=100 + round_)])
                await wait_for(task, round_ + 1)
                await asyncio.to_thread(live.restart)
                deadline = time.monotonic() + 20
                while sum(s.status == "connected" for s in states) < round_ + 2:
                    assert time.monotonic() < deadline, states
                    await asyncio.sleep(0.05)
            await asyncio.to_thread(live.backend.collect, [banner(port=200)])
            got = await wait_for(task, 4)
            task.cancel()
    finally:
        live.stop()
    assert [b.port for b in got] == [100, 101, 102, 200]
    reconnected = [s for s in states if s.status == "connected"][1:]
    assert len(reconnected) == 3 and all(s.gap > 0 for s in reconnected)
    retries = [s for s in states if s.status == "reconnecting"]
    assert retries and all(s.reason for s in retries)


@pytest.mark.external
def test_the_cli_follows_the_stream_through_restarts(tmp_path):
    """Slow (about 8 s): a CLI process, and three restarts of the backend, each of which waits out
    its 1 s graceful stop while the stream is open."""
    live = Restartable(tmp_path / "data")
    env = {**os.environ, "SPYGLASS_URL": live.backend.url, "SPYGLASS_API_KEY": live.key, "PYTHONFAULTHANDLER": "1"}
    # ctrl+c as a terminal sends it to a command in its foreground, whose SIGINT is at its default.
    # A child inherits an ignored SIGINT (a shell without job control starts `cmd &` so, and with
    # it every process of a test run started that way), and then rightly ignores ctrl+c.
    command = ["stream", "--ports", "6000,6001,6002,6003", "--json", "--datadir", str(tmp_path / "saved")]
    proc = subprocess.Popen(
        ["env", "--default-signal=INT", sys.executable, "-m", "spyglass", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    lines = Lines(proc)
    try:
        for round_ in range(4):
            port = 6000 + round_
            deadline = time.monotonic() + 30
            # Until the CLI has (re)subscribed a banner reaches nobody: send fresh ones until one shows.
            while port not in [json.loads(line)["port"] for line in lines.read(0.3)]:
                assert time.monotonic() < deadline and proc.poll() is None, lines.seen
                live.backend.collect([banner(port=port)])
            if round_ < 3:
                live.restart()
        proc.send_signal(signal.SIGINT)  # ctrl+c: what was saved is written out as the command ends
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:  # say where it is stuck: faulthandler prints every thread
            proc.send_signal(signal.SIGABRT)
            _, err = proc.communicate(timeout=10)
            pytest.fail(f"ctrl+c did not end the command; its threads:\n{err.decode(errors='replace')[-6000:]}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        live.stop()
    err_text = err.decode()
    assert err_text.count("reconnected; missed") == 3, err_text
    assert "reconnecting in" in err_text
    (saved,) = (tmp_path / "saved").iterdir()
    assert saved.name == f"{datetime.now(UTC):%Y-%m-%d}.json.gz"
    ports = [json.loads(line)["port"] for line in gzip.open(saved).read().splitlines()]
    assert set(ports) == {6000, 6001, 6002, 6003}
    assert sorted(ports) == [json.loads(line)["port"] for line in lines.seen]


@pytest.mark.external
def test_the_cli_follows_the_embedded_backend_to_its_new_port(tmp_path):
    """Newcomer trial 15, major: `spyglass stream` beside a dashboard whose backend went and came
    back on another port (a dashboard restarts it so) asked the old port for good."""
    from spyglass.testing.backend import serve

    data = tmp_path / "data"
    create = [sys.executable, "-m", "spyglass", "keys", "create", "--data", str(data), "--plan", "enterprise"]
    key = subprocess.run([*create, "--collector"], check=True, capture_output=True, text=True).stdout.strip()
    env = {k: v for k, v in os.environ.items() if k not in ("SPYGLASS_URL", "SPYGLASS_API_KEY")}
    command = [sys.executable, "-m", "spyglass", "--data", str(data), "stream", "--ports", "6100,6101", "--json"]

    def shown(lines: Lines, url: str, port: int) -> None:
        deadline = time.monotonic() + 60
        while port not in [json.loads(line)["port"] for line in lines.read(0.3)]:
            assert time.monotonic() < deadline and proc.poll() is None, lines.seen
            with contextlib.suppress(httpx.TransportError):  # (the old one may still be going)
                httpx.post(f"{url}/spyglass/collect", params={"key": key}, content=json.dumps(banner(port=port)))

    with contextlib.ExitStack() as first:
        url = first.enter_context(serve(data))
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        lines = Lines(proc)
        try:
            shown(lines, url, 6100)
            first.close()  # the backend goes; another starts on the same data, on another port
            with serve(data) as moved:
                assert moved != url
                shown(lines, moved, 6101)
        finally:
            proc.kill()
            _, err = proc.communicate()
    assert f"now answers at {moved}: following it there" in err.decode()


class Lines:
    """A child's stdout, line by line, without blocking past a timeout."""

    def __init__(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        self.fd = proc.stdout.fileno()
        self.buffer = b""
        self.seen: list[bytes] = []

    def read(self, timeout: float) -> list[bytes]:
        """The lines that arrive within ``timeout``."""
        got: list[bytes] = []
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                break
            chunk = os.read(self.fd, 65536)
            if not chunk:
                break
            self.buffer += chunk
            *complete, self.buffer = self.buffer.split(b"\n")
            got += [line for line in complete if line]
        self.seen += got
        return got


async def test_the_demo_collector_makes_the_stream_live_offline(tmp_path):
    server, backend = start_backend(tmp_path / "demo", demo_rate=20)
    with server:
        async with Clients.from_profile(backend.profile(backend.key())) as c:
            async with c.stream.banners() as stream:
                got = []
                async for b in stream:
                    got.append(b)
                    if len(got) == 10:
                        break
        assert all(ip_address(b.address) in NETWORK for b in got)  # the demo hosts, rescanned
        now = datetime.now(UTC).replace(tzinfo=None)
        assert all(abs((datetime.fromisoformat(b.timestamp) - now).total_seconds()) < 60 for b in got)
        services = [(b.address, b.port) for b in got]
        assert all(a != b for a, b in zip(services, services[1:], strict=False))  # no history replayed as now
        assert backend.app.state.banners.records.count() >= 10  # indexed, not only published
    backend.store.close()


def test_the_demo_collector_never_writes_into_real_data(tmp_path):
    from spyglass.server.ingest.importer import import_banners
    from spyglass.server.stream import DemoCollector

    server, backend = start_backend(tmp_path, demo_rate=50)
    import_banners(backend.app.state.banners, [banner()])
    with server:
        (demo,) = [s for s in backend.app.state.services if isinstance(s, DemoCollector)]
        assert demo._task is None
        assert backend.app.state.banners.records.count() == 1
    backend.store.close()


@pytest.mark.external
def test_the_cli_says_when_no_banner_has_a_field_asked_for(served):
    env = {**os.environ, "SPYGLASS_URL": served.url, "SPYGLASS_API_KEY": served.key()}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "spyglass",
            "stream",
            "--ports",
            "6100",
            "--fields",
            "port,nosuch.member",
            "--count",
            "3",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while proc.poll() is None:  # until it has subscribed, a banner reaches nobody: keep sending
            assert time.monotonic() < deadline
            served.collect([banner(port=6100)])
            time.sleep(0.2)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0 and len(out.decode().splitlines()) == 3
    assert "no banner of the 3 seen has nosuch.member" in err.decode()
    assert "port" not in err.decode().split("has", 1)[1].split("(")[0]  # every banner had a port


@pytest.mark.external
def test_sigterm_ends_the_cli_stream_with_what_it_saved_whole(served, tmp_path):
    """A follower in the background ignores ctrl+c (its SIGINT is ignored): `kill` ends it, and the
    day's file must still be a whole gzip file (cut short, what is appended to it later is lost too)."""
    env = {**os.environ, "SPYGLASS_URL": served.url, "SPYGLASS_API_KEY": served.key()}
    command = ["stream", "--ports", "6200", "--json", "--datadir", str(tmp_path)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "spyglass", *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    lines = Lines(proc)
    try:
        deadline = time.monotonic() + 30
        while not lines.read(0.3):  # until it has subscribed, a banner reaches nobody: keep sending
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
            served.collect([banner(port=6200)])
        proc.terminate()
        proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGTERM
    (saved,) = tmp_path.iterdir()
    ports = [json.loads(line)["port"] for line in gzip.open(saved).read().splitlines()]
    assert ports and set(ports) == {6200}
