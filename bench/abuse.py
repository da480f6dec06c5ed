"""The backend under abuse, in one run, all on loopback:

1. stream memory: the server's RSS above idle with 200 readers that never read while 1,000
   banners/s are collected, and with 10 silent readers of 60 KB banners; and after they leave.
   Goal: under 300 MB above idle in both.
2. a normal request's answer time with 1,100 half-sent requests open, against a server limited
   to 1,024 descriptors. Goal: under 2 s.
3. the delay of one account's notification while another account's receiver never answers
   (30 notifications queued for it, each try waiting out its 10 s timeout). Goal: under 2 s.

Then one account (or a client with no key) against the others (issue 34, items 4-8), each on a
stock `spyglass serve --demo`, while another client asks for a count every 0.1 s: that client's
p50/p95 and the server's RSS before, at its peak and after. Goals: the other client answered within
2 s throughout, the server under 500 MB and back near where it started.

4. lookups: 70 notifier tests and 20 geonet pings of names whose DNS never answers;
5. uploads: 64 slow uploads with no key; 6. keys: wrong keys from the other client's address, and
   wrong keys under rotated X-Forwarded-For; 7. queries: 24 clients counting (free) cpe: with
   2,000 values and net: with 1,000; 8. logs: 300 aborted uploads, and what they log.

And the costs one account could multiply (issue 44's majors), each on SQLite and on PostgreSQL
state (a PostgreSQL server of the bench's own, where installed), with the same other client:

9. directory: 12 free clients searching a directory of 4,028 queries with 32 words of 2,000
   characters, and with as many words as the plan allows; 10. facets: 16 free clients counting
   with 5,000 facets, and with the plan's most; 11. alerts: 48 creates of 8 addresses at once by a
   member (16 allowed), through two backends on PostgreSQL: what is monitored after; 12. tests:
   8 free clients testing notifiers to one receiver; 13. saved: 8 free clients saving queries;
   14. internet: 8 clients of one enterprise key starting internet scans (of the stock networks,
   loopback) through two backends on PostgreSQL: how many were under way at once; 15. edits: an
   enterprise account editing its alert of 120,000 networks again and again while another
   account's notifications are timed, from the banner collected to the webhook (p50/p95).

And issue 44c's majors, each on a stock `spyglass serve --demo` with the same other client:

16. trends: 4 clients of each of two enterprise keys asking trends with twenty 1,000-value facets;
17. unread: 1,000 connections with a 1 KiB receive buffer asking an enterprise alert of 120,000
    networks (1.8 MB) and never reading: how many were answered 200, how many 429;
18. bodies: 4 accounts x 10 connections each sending 16 MiB less a byte, the last byte 15 s later:
    the server's RSS peak, and 10 s after; 19. fairtrends: another enterprise account's own small
    trends search while one keeps two heavy trends in flight, then ten clients of them.
20. scansflood: 150 clients with no key asking counts, alone, then beside two internet scans of
    one enterprise key (each the stock 16.7M loopback probes) (attacker trial 3's major).
21. alertstreams: an enterprise account of 10,000 one-address alerts opening its /alert stream
    from 8 clients, each dropped after 1.5 s, and another account's requests after it stops
    (attacker trial 4's major).

    python bench/abuse.py [--seconds 10] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx

from spyglass.datagen import generate
from spyglass.server.state.sqlite.accounts import Store
from spyglass.testing.alerts import Receiver, banner, watch
from spyglass.testing.backend import open_half_sent, serve


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def server_pid(url: str) -> int:
    port = url.rsplit(":", 1)[1]
    out = subprocess.run(["ss", "-Hltnp", f"sport = :{port}"], capture_output=True, text=True).stdout
    return int(out.split("pid=")[1].split(",")[0])


def silent_reader(url: str, key: str) -> socket.socket:
    """A stream request whose reader never reads (its receive buffer as small as it goes)."""
    host, port = url.removeprefix("http://").split(":")
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((host, int(port)))
    s.sendall(f"GET /stream/intel/banners?key={key} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    return s


def collect(url: str, key: str, banners: list[dict]) -> None:
    body = b"\n".join(json.dumps(b).encode() for b in banners)
    httpx.post(f"{url}/spyglass/collect", params={"key": key}, content=body, timeout=60).raise_for_status()


def feed(url: str, key: str, rate: int, seconds: float, size: int = 0) -> None:
    """``rate`` banners a second for ``seconds``, each with ``size`` bytes of data if given."""
    source = generate(2**40, seed=int(time.time()))
    started = time.monotonic()
    sent = 0
    while (elapsed := time.monotonic() - started) < seconds:
        due = int(elapsed * rate) - sent
        if due <= 0:
            time.sleep(0.05)
            continue
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")
        batch = [{**next(source), "timestamp": now} for _ in range(min(due, rate))]
        if size:
            batch = [{**b, "data": "x" * size} for b in batch]
        collect(url, key, batch)
        sent += len(batch)


def stream_memory(seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(tmp)
        keys = [store.create_key("enterprise") for _ in range(200)]
        feeder = store.create_key("enterprise", collector=True)  # collecting is a role a key is given
        store.close()
        with serve(tmp) as url:
            pid = server_pid(url)
            collect(url, feeder, [{**b} for b in generate(2000, seed=2)])  # warm: the index open, the code loaded
            idle = rss_mb(pid)
            for name, readers, rate, size in (
                ("200 silent readers at 1,000 banners/s", 200, 1000, 0),
                ("10 silent readers of 60 KB banners", 10, 20, 60_000),
            ):
                socks = [silent_reader(url, key) for key in keys[:readers]]
                peak = idle
                feeding = threading.Thread(target=feed, args=(url, feeder, rate, seconds, size))
                feeding.start()
                while feeding.is_alive():
                    peak = max(peak, rss_mb(pid))
                    time.sleep(0.2)
                for s in socks:
                    s.close()
                time.sleep(2)
                after = rss_mb(pid)
                print(
                    f"stream RSS, {name}: idle {idle:.0f} MB, peak {peak:.0f} MB "
                    f"(+{peak - idle:.0f} MB above idle), {after:.0f} MB once they left"
                )


def idle_connections() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    with tempfile.TemporaryDirectory() as tmp, serve(tmp, descriptors=1024) as url:
        flood = open_half_sent(url, 1100)
        started = time.perf_counter()
        answer = httpx.get(url + "/spyglass/info", timeout=30)
        took = time.perf_counter() - started
        for s in flood:
            s.close()
    print(f"a normal request with 1,100 half-sent requests open (1,024 descriptors): HTTP {answer.status_code} in "
          f"{took * 1000:.0f} ms")  # fmt: skip


def delivery_delay() -> None:
    from spyglass.client import Clients
    from spyglass.testing.backend import start_backend

    async def run(tmp: Path) -> float:
        with Receiver() as receiver, socket.socket() as dead:
            dead.bind(("127.0.0.1", 0))
            dead.listen(128)
            server, backend = start_backend(tmp, notifier_allow=["127.0.0.0/8"])
            with server:
                async with (
                    Clients.from_profile(backend.profile(backend.key())) as stuck,
                    Clients.from_profile(backend.profile(backend.key())) as other,
                ):
                    await watch(stuck, f"http://127.0.0.1:{dead.getsockname()[1]}/", ["127.0.2.0/24"], "any")
                    await watch(other, receiver.url + "/hook", ["127.0.3.0/24"], "any")
                    backend.collect([banner("127.0.2.1", port) for port in range(1, 31)])
                    started = time.perf_counter()
                    backend.collect([banner("127.0.3.1", 80)])
                    receiver.wait_for("127.0.3.1:80", timeout=600)
                    took = time.perf_counter() - started
            backend.store.close()
        return took

    with tempfile.TemporaryDirectory() as tmp:
        took = asyncio.run(run(Path(tmp)))
    print(f"another account's notification beside a receiver that never answers (30 queued): {took * 1000:.0f} ms")


# --- attacks of one account (or none) on the others: issue 34, items 4-8 -------------------------


class Victim:
    """Another client, a polite one, asking for a count with a facet every 0.1 s on a connection
    of its own each time (as the CLI does) while an attack runs; and the server's RSS meanwhile."""

    def __init__(self, url: str, key: str, pid: int, path: str = "/intel/host/count", query: str = "port:22") -> None:
        self.url, self.key, self.pid, self.path, self.query = url, key, pid, path, query
        self.answers: list[tuple[float, int]] = []  # (seconds, status; 0: no answer within 10 s)
        self.rss_before = self.rss_peak = self.rss_after = 0.0
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> Victim:
        time.sleep(1)
        self.rss_before = self.rss_peak = rss_mb(self.pid)
        self._threads = [threading.Thread(target=self._ask), threading.Thread(target=self._watch)]
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *_) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()

    def settle(self, seconds: float = 5.0) -> None:
        time.sleep(seconds)
        self.rss_after = rss_mb(self.pid)

    def _ask(self) -> None:
        params = {"key": self.key, "query": self.query, "facets": "country"}
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                status = httpx.get(f"{self.url}{self.path}", params=params, timeout=10).status_code
            except httpx.HTTPError:
                status = 0
            self.answers.append((time.perf_counter() - started, status))
            self._stop.wait(0.1)

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            self.rss_peak = max(self.rss_peak, rss_mb(self.pid))

    def report(self, attack: str) -> None:
        times = sorted(t for t, _ in self.answers)
        ok = sum(1 for _, s in self.answers if s == 200)
        p50 = times[len(times) // 2] if times else float("nan")
        p95 = times[min(len(times) - 1, int(len(times) * 0.95))] if times else float("nan")
        print(
            f"{attack}: another client p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, {ok} of "
            f"{len(self.answers)} answered 200; server RSS {self.rss_before:.0f} MB before, "
            f"{self.rss_peak:.0f} MB peak, {self.rss_after:.0f} MB after"
        )


@contextmanager
def stock_backend(*options: str, log: Path | None = None) -> Iterator[tuple[str, int, str]]:
    """``spyglass serve --demo`` with its stock settings, as a process: its URL, pid and data dir."""
    with tempfile.TemporaryDirectory() as tmp:
        with serve(tmp, "--demo", *options, log=log) as url:
            yield url, server_pid(url), tmp


def keys(data_dir: str, *plans: str, state: str | None = None, collector: bool = False) -> list[str]:
    where = ["--state", state] if state else ["--data", data_dir]
    role = ["--collector"] if collector else []
    out = subprocess.run(
        [sys.executable, "-m", "spyglass", "keys", "create", *where, *role, "--plan", plans[0]],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    made = [out.stdout.strip()]
    for plan in plans[1:]:
        made += keys(data_dir, plan, state=state, collector=collector)
    return made


def run_for(seconds: float, stop: threading.Event, attackers: list) -> None:
    """Each of ``attackers`` in a thread of its own for ``seconds``, then ``stop`` set and all joined."""
    threads = [threading.Thread(target=attack) for attack in attackers]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()


FORM = "content-type: application/x-www-form-urlencoded\r\n"  # a form body may carry the key: it is read


def silent_nameserver() -> socket.socket:
    """A UDP socket on loopback that is never read: a DNS server that never answers."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    return s


def slow_name_lookups(seconds: float) -> None:
    """Item 4: a free account keeps 70 notifier tests to a name whose DNS never answers in flight,
    and anyone (no key) 20 geonet pings of such names."""
    with silent_nameserver() as dns:
        nameserver = f"127.0.0.1:{dns.getsockname()[1]}"
        with stock_backend("--nameserver", nameserver) as (url, pid, data):
            free, victim = keys(data, "free", "member")
            hook = {"provider": "webhook", "url": "http://never.answers.test/hook"}
            made = httpx.post(f"{url}/notifier", params={"key": free}, data=hook, timeout=10)
            notifier = made.json()["id"]
            stop = threading.Event()

            def tests() -> None:
                while not stop.is_set():
                    try:
                        httpx.post(f"{url}/notifier/{notifier}/test", params={"key": free}, timeout=30)
                    except httpx.HTTPError:
                        pass

            def pings() -> None:
                n = 0
                while not stop.is_set():
                    n += 1
                    try:
                        httpx.get(f"{url}/geonet/api/ping/slow{n}.never.answers.test", timeout=30)
                    except httpx.HTTPError:
                        pass

            with Victim(url, victim, pid) as v:
                run_for(seconds, stop, [tests] * 70 + [pings] * 20)
                v.settle()
            v.report("4. 70 notifier tests + 20 geonet pings of names whose DNS never answers")


def slow_uploads(seconds: float) -> None:
    """Item 5: 64 connections with no key send POST /notifier with Content-Length 1,000,000,000
    and a byte every 5 s."""
    with stock_backend() as (url, pid, data):
        (victim,) = keys(data, "member")
        host, port = url.removeprefix("http://").split(":")
        head = f"POST /notifier HTTP/1.1\r\nHost: {host}\r\n{FORM}content-length: 1000000000\r\n\r\n".encode()
        with Victim(url, victim, pid) as v:
            started, socks = time.monotonic(), []
            while time.monotonic() - started < seconds:
                live = []
                for s in socks:
                    try:
                        s.send(b"a")
                        live.append(s)
                    except OSError:
                        s.close()
                while len(live) < 64:  # the attacker comes back as soon as it is cut off
                    s = socket.create_connection((host, int(port)))
                    s.sendall(head)
                    live.append(s)
                socks = live
                time.sleep(5)
            for s in socks:
                s.close()
            v.settle()
        v.report("5. 64 slow uploads with no key (a byte every 5 s)")


def wrong_keys(seconds: float) -> None:
    """Item 6: 5 wrong keys a second from the victim's own address, then 200 wrong keys each with
    another X-Forwarded-For: how many of those were refused with 429 (all but the first 20 when the
    header is not trusted)."""
    with stock_backend() as (url, pid, data):
        (victim,) = keys(data, "member")
        with Victim(url, victim, pid) as v:
            started = time.monotonic()
            while time.monotonic() - started < seconds:
                httpx.get(f"{url}/api-info", params={"key": "0" * 32}, timeout=10)
                time.sleep(0.2)
            v.settle(1)
        v.report("6. 5 wrong keys a second from the same address")
    with stock_backend() as (url, pid, data):
        refused = sum(
            httpx.get(f"{url}/api-info", params={"key": "0" * 32},
                      headers={"X-Forwarded-For": f"203.0.113.{n % 250 + 1}"}, timeout=10).status_code == 429
            for n in range(200)
        )  # fmt: skip
        print(f"6. 200 wrong keys, each with another X-Forwarded-For: {refused} answered 429")


def costly_free_queries(seconds: float) -> None:
    """Item 7: 24 clients with no credit to spend send counts of cpe: with 2,000 values, and of
    net: with 1,000 copies of 0.0.0.0/0."""
    cpe = "cpe:" + ",".join(f"{n:03x}" for n in range(2000))  # 8 KB of URL
    net = "net:" + ",".join(["0.0.0.0/0"] * 1000)
    with stock_backend() as (url, pid, data):
        free, victim = keys(data, "free", "member")
        stop = threading.Event()
        statuses: dict[int, int] = {}

        def flood(query: str) -> None:
            with httpx.Client(timeout=30) as client:
                while not stop.is_set():
                    try:
                        status = client.get(f"{url}/intel/host/count", params={"key": free, "query": query}).status_code
                    except httpx.HTTPError:
                        status = 0
                    statuses[status] = statuses.get(status, 0) + 1

        with Victim(url, victim, pid) as v:
            run_for(seconds, stop, [lambda q=cpe if n % 2 else net: flood(q) for n in range(24)])
            v.settle(10)
        v.report(f"7. 24 clients counting cpe: x2,000 and net: x1,000 (answered {dict(sorted(statuses.items()))})")


def disconnect_logs(seconds: float) -> None:
    """Item 8: 300 uploads with no key cut off half-way: what they write to the server's log."""
    with tempfile.NamedTemporaryFile(suffix=".log") as log, stock_backend(log=Path(log.name)) as (url, pid, data):
        (victim,) = keys(data, "member")
        host, port = url.removeprefix("http://").split(":")
        time.sleep(1)
        before = Path(log.name).stat().st_size
        with Victim(url, victim, pid) as v:
            for _ in range(300):
                with socket.create_connection((host, int(port))) as s:
                    head = f"POST /notifier HTTP/1.1\r\nHost: {host}\r\n{FORM}content-length: 100000\r\n\r\n"
                    s.sendall(head.encode() + b"x" * 5000)
            time.sleep(min(seconds, 3))
            v.settle(1)
        written = Path(log.name).stat().st_size - before
        v.report(f"8. 300 aborted uploads with no key ({written:,} bytes logged, {written / 300:.0f} B each)")


# --- costs one account could multiply: issue 44's majors -----------------------------------------


@contextmanager
def states() -> Iterator[tuple[str, str | None]]:
    """("SQLite", None), then ("PostgreSQL", a fresh database's address) where PostgreSQL is installed."""
    from spyglass.testing.postgres import PostgresServer

    try:
        server = PostgresServer().start()
    except Exception as exc:  # noqa: BLE001 (a bench: say why and go on with SQLite)
        print(f"(no PostgreSQL state: {exc})")
        server = None
    databases = iter(range(1_000))

    def listed() -> Iterator[tuple[str, str | None]]:
        yield "SQLite", None
        if server is not None:
            yield "PostgreSQL", server.create_database(f"abuse{next(databases)}")

    try:
        yield listed
    finally:
        if server is not None:
            server.remove()


@contextmanager
def backend_on(state: str | None, *options: str) -> Iterator[tuple[str, int, str]]:
    with stock_backend(*(("--state", state) if state else ()), *options) as (url, pid, data):
        yield url, pid, data


def flood(seconds: float, clients: int, method: str, url: str, vary: str = "", **request) -> dict[int, int]:
    """``clients`` threads sending the same request for ``seconds`` (``vary``: a parameter made
    different each time), in a process of their own: their CPU (40 KB URLs encoded, say) is not
    spent under the GIL of the other client's thread here. How often each status came."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    answers = context.Queue()
    attacker = context.Process(target=_flood, args=(seconds, clients, method, url, vary, request, answers))
    attacker.start()
    statuses = answers.get()
    attacker.join()
    return statuses


def _flood(seconds: float, clients: int, method: str, url: str, vary: str, request: dict, answers) -> None:
    stop, statuses, lock = threading.Event(), {}, threading.Lock()

    def client() -> None:
        with httpx.Client(timeout=30) as http:
            n = 0
            while not stop.is_set():
                n += 1
                params = dict(request.get("params", {}))
                if vary:
                    params[vary] = f"{params[vary]} {threading.get_ident()} {n}"
                try:
                    status = http.request(method, url, **{**request, "params": params}).status_code
                except httpx.HTTPError:
                    status = 0
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1

    run_for(seconds, stop, [client] * clients)
    answers.put(dict(sorted(statuses.items())))


def _directory_words_on(name: str, state: str | None, seconds: float) -> None:
    from spyglass.server.plans import PLANS
    from spyglass.server.state.postgres.directory import PostgresDirectory
    from spyglass.server.state.sqlite.directory import Directory

    free = PLANS["free"]
    longest = " ".join(["ipsum" + "x" * (free.directory_word_length - 5)] * free.directory_words)
    with backend_on(state) as (url, pid, data):
        directory = PostgresDirectory(state) if state else Directory(Path(data))
        for n in range(4028):  # as the attacker's directory held (saved past today's quotas)
            directory.save(1, f"spam {n}", "nginx", "lorem ipsum " * 20, ["spam"])
        directory.close()
        attacker, victim = keys(data, "free", "member", state=state)
        for words, what in (
            (" ".join(["a" * 2000] * 32), "32 words of 2,000 characters"),
            (longest, f"{free.directory_words} words of {free.directory_word_length} (the free plan's most)"),
        ):
            with Victim(url, victim, pid) as v:
                got = flood(seconds, 12, "GET", f"{url}/intel/query/search", params={"key": attacker, "query": words})
                v.settle(1)
            v.report(f"9. {name}: 12 free clients searching 4,028 queries with {what} (answered {got})")


def _many_facets_on(name: str, state: str | None, seconds: float) -> None:
    most = "org:100,product:100,port:100,country:100,asn:100"
    with backend_on(state) as (url, pid, data):
        attacker, victim = keys(data, "free", "member", state=state)
        for facets, what in ((",".join(["port"] * 5000), "5,000 facets"), (most, "5 facets of 100")):
            count = {"key": attacker, "query": "port:22", "facets": facets}
            with Victim(url, victim, pid) as v:
                got = flood(seconds, 16, "GET", f"{url}/intel/host/count", params=count)
                v.settle(1)
            v.report(f"10. {name}: 16 free clients counting with {what} (answered {got})")


def _alert_budget_on(name: str, state: str | None, seconds: float) -> None:
    """Rounds of 48 creates at once (spread over the backends), each round's alerts deleted after
    it, for ``seconds``: the most addresses any round ended up monitoring."""
    from concurrent.futures import ThreadPoolExecutor

    with ExitStack() as stack:
        first = stack.enter_context(backend_on(state))
        urls = [first[0]] + ([stack.enter_context(backend_on(state))[0]] if state else [])
        member, victim = keys(first[2], "member", "member", state=state)
        alerts = f"{first[0]}/intel/alert"
        http = stack.enter_context(httpx.Client(timeout=30, limits=httpx.Limits(max_connections=48)))

        def create(n: int) -> int:  # one client for all: a client each is CPU in this process, beside the other's
            body = {"name": f"a{n}", "filters": {"ip": [f"10.{n}.0.0/29"]}}
            return http.post(f"{urls[n % len(urls)]}/intel/alert", params={"key": member}, json=body).status_code

        rounds, most = 0, 0
        with Victim(first[0], victim, first[1]) as v, ThreadPoolExecutor(48) as pool:
            started = time.monotonic()
            while time.monotonic() - started < seconds:
                list(pool.map(create, range(48)))
                made = httpx.get(f"{alerts}/info", params={"key": member}, timeout=30).json()
                most, rounds = max(most, sum(a["size"] for a in made)), rounds + 1
                for alert in made:
                    httpx.delete(f"{alerts}/{alert['id']}", params={"key": member}, timeout=30)
            v.settle(1)
        v.report(
            f"11. {name}: {rounds} rounds of 48 creates of 8 addresses at once through {len(urls)} backend(s), "
            f"member plan of 16: at most {most} monitored after a round"
        )


def notifier_tests(seconds: float) -> None:
    with Receiver() as receiver, states() as listed:
        for name, state in listed():
            _notifier_tests_on(name, state, seconds, receiver)


def _notifier_tests_on(name: str, state: str | None, seconds: float, receiver: Receiver) -> None:
    with backend_on(state, "--notifier-allow", "127.0.0.0/8") as (url, pid, data):
        attacker, victim = keys(data, "free", "member", state=state)
        hook = {"provider": "webhook", "url": f"{receiver.url}/{name}"}
        made = httpx.post(f"{url}/notifier", params={"key": attacker}, data=hook, timeout=10).json()["id"]
        before = len(receiver.posts)
        with Victim(url, victim, pid) as v:
            got = flood(seconds, 8, "POST", f"{url}/notifier/{made}/test", params={"key": attacker})
            v.settle(1)
        sent = len(receiver.posts) - before
        v.report(f"12. {name}: 8 free clients testing a notifier for {seconds:g} s: {sent} sent (answered {got})")


def saved_queries(seconds: float) -> None:
    with states() as listed:
        for name, state in listed():
            with backend_on(state) as (url, pid, data):
                attacker, victim = keys(data, "free", "member", state=state)
                save = {"key": attacker, "title": "spam", "query": "nginx"}
                with Victim(url, victim, pid) as v:
                    got = flood(seconds, 8, "POST", f"{url}/intel/query", vary="title", params=save)
                    v.settle(1)
                v.report(f"13. {name}: 8 free clients saving queries for {seconds:g} s (answered {got})")


def _internet_scans_on(name: str, state: str | None, seconds: float) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ExitStack() as stack:
        first = stack.enter_context(backend_on(state))
        urls = [first[0]] + ([stack.enter_context(backend_on(state))[0]] if state else [])
        attacker, victim = keys(first[2], "enterprise", "member", state=state)
        start = {"params": {"key": attacker}, "data": {"port": "9", "protocol": "generic"}}

        def starts(url: str) -> dict[int, int]:
            return flood(seconds, 8 // len(urls), "POST", f"{url}/intel/scan/internet", **start)

        with Victim(first[0], victim, first[1]) as v, ThreadPoolExecutor(len(urls)) as pool:  # at once on both
            got = list(pool.map(starts, urls))
            listed = httpx.get(f"{first[0]}/intel/scans", params={"key": attacker}, timeout=30).json()["matches"]
            v.settle(1)
        under_way = [s["id"] for s in listed if s["status"] not in ("DONE", "CANCELLED")]
        for scan_id in under_way:
            httpx.delete(f"{first[0]}/intel/scan/{scan_id}", params={"key": attacker}, timeout=30)
        v.report(
            f"14. {name}: 8 clients starting internet scans through {len(urls)} backend(s) for {seconds:g} s: "
            f"{len(listed)} started, {len(under_way)} under way after (answered {got})"
        )


def _alert_edits_on(name: str, state: str | None, seconds: float) -> None:
    from spyglass.client import Clients
    from spyglass.config import Profile

    def delays(rounds: int, receiver: Receiver, port: int) -> list[float]:
        took = []
        for n in range(port, port + rounds):
            started = time.perf_counter()
            collect(url, feeder, [banner("127.0.3.1", n)])
            receiver.wait_for(f"127.0.3.1:{n}", timeout=120)
            took.append(time.perf_counter() - started)
        return sorted(took)

    with Receiver() as receiver, backend_on(state, "--notifier-allow", "127.0.0.0/8") as (url, pid, data):
        editor, other = keys(data, "enterprise", "member", state=state)
        feeder = keys(data, "enterprise", state=state, collector=True)[0]
        big = [f"10.{n >> 16}.{(n >> 8) & 255}.{n & 255}/32" for n in range(120_000)]

        async def watching(key: str, networks: list[str], hook: str) -> str:
            async with Clients.from_profile(Profile(name="bench", url=url, key=key, rate=None)) as c:
                return await watch(c, receiver.url + hook, networks, "any")

        made = asyncio.run(watching(editor, big, "/big"))
        asyncio.run(watching(other, ["127.0.3.0/28"], "/other"))
        quiet = delays(10, receiver, 1000)
        # The editor in a process of its own, as flood's clients: encoding its 2.4 MB bodies is not
        # spent under the GIL of the thread here that times the other account's notifications.
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        stop, answers = context.Event(), context.Queue()
        edit = (f"{url}/intel/alert/{made}", editor, big, stop, answers)
        editing = context.Process(target=_edit_again_and_again, args=edit)
        editing.start()
        started, busy, port = time.monotonic(), [], 2000
        while time.monotonic() - started < seconds:
            busy += delays(1, receiver, port)
            port += 1
        stop.set()
        edits = answers.get()
        editing.join()
        busy.sort()
        print(
            f"15. {name}: another account's notification p50 {quiet[len(quiet) // 2] * 1000:.0f} ms alone; "
            f"p50 {busy[len(busy) // 2] * 1000:.0f} ms, p95 {busy[int(len(busy) * 0.95)] * 1000:.0f} ms "
            f"while its alert of 120,000 networks was edited again and again for {seconds:g} s (answered {edits})"
        )


def _edit_again_and_again(url: str, key: str, networks: list[str], stop, answers) -> None:
    """Edits of the alert at ``url`` to ``networks`` (the first changed each time) until ``stop``
    is set; how often each status came, put in ``answers``."""
    edits: dict[int, int] = {}
    with httpx.Client(params={"key": key}, timeout=120) as http:
        while not stop.is_set():
            networks[0] = f"10.200.0.{sum(edits.values()) % 250}/32"
            status = http.post(url, json={"filters": {"ip": networks}}).status_code
            edits[status] = edits.get(status, 0) + 1
    answers.put(edits)


TRENDS_FACETS = ",".join(
    f"{name}:1000"
    for name in (
        "ip", "hash", "http.html_hash", "domain", "ssl.cert.fingerprint", "ssh.fingerprint", "http.title", "org",
        "city", "isp", "asn", "country", "os", "port", "product", "region", "ssl.cert.serial", "http.favicon.hash",
        "http.robots_hash", "http.component",
    )
)  # fmt: skip


def heavy_trends(seconds: float) -> None:
    """Item 16: each request 0.5-1 s of a core and up to 2 MB, from two accounts at once."""
    with stock_backend() as (url, pid, data):
        attackers, victim = keys(data, "enterprise", "enterprise"), keys(data, "member")[0]
        got: dict[str, dict[int, int]] = {}

        def attack(key: str) -> None:
            trends = {"key": key, "query": "has_screenshot:false", "facets": TRENDS_FACETS}
            got[key[:4]] = flood(seconds, 4, "GET", f"{url}/trends/api/v1/search", params=trends)

        with Victim(url, victim, pid) as v:
            run_for(0, threading.Event(), [lambda k=k: attack(k) for k in attackers])
            v.settle(1)
        v.report(f"16. trends with twenty 1,000-value facets, 4 clients of each of 2 enterprise keys (answered {got})")


def trends_beside_trends(seconds: float) -> None:
    """Item 19: another enterprise account's own small trends search while one account keeps two
    heavy ones in flight (its cap allows two: each counts 2 of 4), then ten clients of them."""
    with stock_backend() as (url, pid, data):
        attacker, victim = keys(data, "enterprise", "enterprise")
        for clients in (2, 10):
            trends = {"key": attacker, "query": "has_screenshot:false", "facets": TRENDS_FACETS}
            got: dict[int, int] = {}

            def attack(n: int = clients, params: dict = trends, answered: dict = got) -> None:
                answered.update(flood(seconds, n, "GET", f"{url}/trends/api/v1/search", params=params))

            with Victim(url, victim, pid, path="/trends/api/v1/search", query="port:443") as v:
                run_for(0, threading.Event(), [attack])
                v.settle(1)
            attack_said = f"{clients} clients of heavy trends (answered {got})"
            v.report(f"19. another account's trends (port:443, facets country) beside {attack_said}")


def unread_answers(seconds: float) -> None:
    """Item 17: what the server holds for answers nobody reads, and whether the account's cap holds."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))  # ours, and the server's it inherits
    with stock_backend() as (url, pid, data):
        owner, victim = keys(data, "enterprise", "member")
        big = [f"10.{n >> 16}.{(n >> 8) & 255}.{n & 255}/32" for n in range(120_000)]
        made = httpx.post(
            f"{url}/intel/alert", params={"key": owner}, json={"name": "big", "filters": {"ip": big}}, timeout=120
        )
        made.raise_for_status()
        host, port = url.removeprefix("http://").split(":")
        ask = f"GET /intel/alert/info?key={owner} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
        socks = []
        with Victim(url, victim, pid) as v:
            for _ in range(1000):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
                s.connect((host, int(port)))
                s.sendall(ask)
                socks.append(s)
            time.sleep(seconds)
            lines = []
            for s in socks:  # peeked, not read: what the server holds stays held
                s.setblocking(False)
                try:
                    lines.append(s.recv(12, socket.MSG_PEEK)[9:12].decode())
                except OSError:
                    lines.append("none")
            for s in socks:
                s.close()
            v.settle(5)
        answered = {line: lines.count(line) for line in sorted(set(lines))}
        v.report(f"17. 1,000 unread answers of an alert of 120,000 networks (first lines: {answered})")


def large_bodies(seconds: float) -> None:
    """Item 18: bodies held whole, from several accounts at once."""
    with stock_backend() as (url, pid, data):
        senders, victim = keys(data, "enterprise", "enterprise", "enterprise", "enterprise"), keys(data, "member")[0]
        host, port = url.removeprefix("http://").split(":")
        body = b"x" * (16 * 1024 * 1024 - 1)
        statuses: list[str] = []

        def upload(key: str) -> None:
            head = f"POST /intel/alert?key={key} HTTP/1.1\r\nHost: {host}\r\ncontent-type: application/json\r\n"
            try:
                with socket.create_connection((host, int(port)), timeout=60) as s:
                    s.sendall(f"{head}content-length: {len(body) + 1}\r\n\r\n".encode() + body)
                    time.sleep(15)
                    s.sendall(b"}")
                    statuses.append(s.recv(12)[9:12].decode())
            except OSError:  # refused, and reset before the whole body was sent
                statuses.append("refused")

        with Victim(url, victim, pid) as v:
            run_for(0, threading.Event(), [lambda k=k: upload(k) for k in senders for _ in range(10)])
            v.settle(10)
        answered = {status: statuses.count(status) for status in sorted(set(statuses))}
        v.report(f"18. 4 accounts x 10 bodies of 16 MiB, the last byte 15 s late (answers: {answered})")


def scans_beside_a_flood(seconds: float) -> None:
    """Item 20: a keyless flood alone, then with two internet scans under way."""
    with stock_backend() as (url, pid, data):
        attacker, victim = keys(data, "enterprise", "member")
        count = {"params": {"query": "port:22", "facets": "country"}}
        with Victim(url, victim, pid) as v:
            got = flood(seconds, 150, "GET", f"{url}/intel/host/count", **count)
        v.report(f"20. 150 keyless clients, no scan (answered {got})")
        started = [
            httpx.post(
                f"{url}/intel/scan/internet", params={"key": attacker}, data={"port": "9", "protocol": "generic"}
            ).json()["id"]
            for _ in range(2)
        ]
        with Victim(url, victim, pid) as v:
            got = flood(seconds, 150, "GET", f"{url}/intel/host/count", **count)
        v.report(f"20. the same beside two internet scans (answered {got})")
        with Victim(url, victim, pid) as v:
            time.sleep(seconds)
        v.report("20. the two internet scans alone")
        for scan_id in started:
            httpx.delete(f"{url}/intel/scan/{scan_id}", params={"key": attacker}, timeout=30)


def alert_streams_dropped(seconds: float) -> None:
    """Item 21: opens of a large account's /alert stream, dropped; the other client during and after."""
    from spyglass.netblocks import parse_networks
    from spyglass.server.state.sqlite.accounts import Store as Accounts
    from spyglass.server.state.sqlite.alerts import AlertStore

    with stock_backend() as (url, pid, data):
        attacker, victim = keys(data, "enterprise", "member")
        accounts, alerts = Accounts(Path(data)), AlertStore(Path(data))
        account = accounts.account_for_key(attacker)
        for n in range(10_000):
            alerts.create_alert(account.id, f"a{n}", parse_networks([f"10.{n >> 8}.{n & 255}.1"]), 0)
        accounts.close()
        alerts.close()
        stop = threading.Event()

        def opener() -> None:
            while not stop.is_set():
                try:
                    with httpx.stream("GET", f"{url}/stream/intel/alert", params={"key": attacker}, timeout=1.5) as r:
                        for _ in r.iter_bytes():
                            break
                except httpx.HTTPError:
                    pass

        with Victim(url, victim, pid) as v:
            run_for(seconds, stop, [opener] * 8)
        v.report("21. 8 clients opening a 10,000-alert account's /alert stream, each dropped after 1.5 s")
        with Victim(url, victim, pid, path="/notifier") as v:
            time.sleep(10)
        v.report("21. after them: another account's notifiers listed (a request that takes a thread)")


def on_each_state(attack: Callable[[str, str | None, float], None]) -> Callable[[float], None]:
    """``attack(name, state, seconds)`` run on SQLite state, then on PostgreSQL's."""

    def run(seconds: float) -> None:
        with states() as listed:
            for name, state in listed():
                attack(name, state, seconds)

    return run


ATTACKS = {
    "stream": stream_memory,
    "idle": lambda _: idle_connections(),
    "delivery": lambda _: delivery_delay(),
    "lookups": slow_name_lookups,
    "uploads": slow_uploads,
    "keys": wrong_keys,
    "queries": costly_free_queries,
    "logs": disconnect_logs,
    "directory": on_each_state(_directory_words_on),
    "facets": on_each_state(_many_facets_on),
    "alerts": on_each_state(_alert_budget_on),
    "tests": notifier_tests,
    "saved": saved_queries,
    "internet": on_each_state(_internet_scans_on),
    "edits": on_each_state(_alert_edits_on),
    "trends": heavy_trends,
    "fairtrends": trends_beside_trends,
    "unread": unread_answers,
    "bodies": large_bodies,
    "scansflood": scans_beside_a_flood,
    "alertstreams": alert_streams_dropped,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0, help="how long each stream load runs")
    parser.add_argument("--only", action="append", choices=ATTACKS, help="run only these (repeatable)")
    args = parser.parse_args()
    for name in args.only or ATTACKS:
        ATTACKS[name](args.seconds)


if __name__ == "__main__":
    main()
