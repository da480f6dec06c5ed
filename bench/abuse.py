"""The backend under abuse, in one run, all on loopback:

1. stream memory: the server's RSS above idle with 200 readers that never read while 1,000
   banners/s are collected, and with 10 silent readers of 60 KB banners; and after they leave.
   Goal: under 300 MB above idle in both.
2. a normal request's answer time with 1,100 half-sent requests open, against a server limited
   to 1,024 descriptors. Goal: under 2 s.
3. the delay of one account's notification while another account's receiver never answers
   (30 notifications queued for it, each try waiting out its 10 s timeout). Goal: under 2 s.

    python bench/abuse.py [--seconds 10]
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
from datetime import UTC, datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spyglass.datagen import generate  # noqa: E402
from spyglass.server.store import Store  # noqa: E402
from tests.contract.test_alerts_delivery import Receiver, banner, watch  # noqa: E402
from tests.contract.test_guard import open_half_sent, serve  # noqa: E402


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
        feeder = store.local_key()
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
    from tests.conftest import start_backend

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0, help="how long each stream load runs")
    args = parser.parse_args()
    stream_memory(args.seconds)
    idle_connections()
    delivery_delay()


if __name__ == "__main__":
    main()
