"""The scanner: every port of 127.0.0.1 beside ``nmap -sT`` in the same run, services scanned per
second against loopback services, and memory while scanning a /16 of closed loopback ports.

1. 127.0.0.1 ports 1-65535 with ``--listeners`` services of our own open on it (a few speak, a few
   accept and stay silent): the scan's connect pass (what ``nmap -sT`` does: connect, nothing more)
   and the whole scan to DONE (banners grabbed from the open ports too), against ``nmap -sT`` on
   the same ports, in ports/s (best of three each), with the open ports each found, and the whole
   scan beside ``nmap -sT -sV`` (nmap grabbing banners too). Goal: connect pass >= 0.8x nmap -sT.
   nmap comes from Debian's package, installed here when missing (root, apt-get).
2. ``--services`` HTTP-ish services (a line-speaking greeter on 127.0.5.x:PORT, in a separate
   process so the scanner has its own core) are scanned as one scan; services/s = found / time.
3. 127.1.0.0/16 on one closed port (65,536 probes): probes/s and the peak RSS over the run.

    python bench/scan.py [--services 500] [--concurrency 256] [--listeners 20]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import re
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from spyglass.netools.scantargets import ScanSpec
from spyglass.server.collect import Collector
from spyglass.server.index import BannerIndex
from spyglass.server.scanner.protocols import PORTS
from spyglass.server.scanner.service import ScanService
from spyglass.server.scanner.sweep import Slots, connect_sweep
from spyglass.server.state.sqlite.scans import ScanStore

SERVICE_PORT = 18080
CLOSED_PORT = 1  # nothing listens on tcpmux here


def serve_greeters(count: int, ready) -> None:
    """In a child process: ``count`` services answering like a small web server."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await asyncio.wait_for(reader.read(1024), 2)
            body = b"<html><head><title>bench</title></head><body>ok</body></html>"
            writer.write(
                b"HTTP/1.1 200 OK\r\nServer: bench/1.0\r\nContent-Type: text/html\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\nConnection: close\r\n\r\n"
                + body
            )
            await writer.drain()
        except (TimeoutError, OSError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        hosts = [f"127.0.{5 + i // 250}.{1 + i % 250}" for i in range(count)]
        servers = [await asyncio.start_server(handle, host, SERVICE_PORT) for host in hosts]
        ready.set()
        await asyncio.gather(*(s.serve_forever() for s in servers))

    asyncio.run(main())


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def run_scan(data: Path, spec: ScanSpec, concurrency: int, sample=None) -> tuple[float, int, int]:
    index = BannerIndex(data)
    collector = Collector(index)
    store = ScanStore(data)
    service = ScanService(store, collector, index, concurrency=concurrency, timeout=3.0)
    await collector.start()
    await service.start()
    scan = store.create(
        account_id=1, api_key="bench", size=spec.addresses(), spec=spec.to_json(), probes=spec.probe_count(len(PORTS))
    )
    started = time.perf_counter()
    service.submit(scan)
    while (current := store.get(scan.id)) and current.status != "DONE":
        if sample:
            sample()
        await asyncio.sleep(0.05)
    elapsed = time.perf_counter() - started
    await service.stop()
    await collector.stop()
    store.close()
    index.close()
    return elapsed, current.found, current.probes


def ensure_nmap() -> str:
    if not shutil.which("nmap"):
        print("installing nmap from Debian's packages (apt-get) ...", flush=True)
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "nmap"], check=True, stdout=subprocess.DEVNULL)
    return shutil.which("nmap") or "nmap"


def serve_listeners(count: int, ready, ports) -> None:
    """In a child process: ``count`` services on 127.0.0.1, one in three silent (accepts, says nothing)."""

    async def speak(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):  # a scanner that connects and leaves resets the connection
            writer.write(b"220 bench service ready\r\n")
            await writer.drain()
        writer.close()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            await reader.read(1024)
        writer.close()

    async def main() -> None:
        servers = [await asyncio.start_server(silent if i % 3 == 0 else speak, "127.0.0.1", 0) for i in range(count)]
        ports.extend([s.sockets[0].getsockname()[1] for s in servers])
        ready.set()
        await asyncio.gather(*(s.serve_forever() for s in servers))

    asyncio.run(main())


def nmap_scan(nmap: str, *options: str) -> tuple[float, set[int]]:
    started = time.perf_counter()
    out = subprocess.run(
        [nmap, "-sT", *options, "-n", "-Pn", "-p1-65535", "-oG", "-", "127.0.0.1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    elapsed = time.perf_counter() - started
    return elapsed, {int(m) for m in re.findall(r"(\d+)/open/tcp", out)}


async def sweep_all_ports(concurrency: int) -> tuple[float, set[int]]:
    targets = [("127.0.0.1", port) for port in range(1, 65536)]
    started = time.perf_counter()
    result = await connect_sweep(targets, Slots(concurrency), timeout=1.5)
    return time.perf_counter() - started, {port for (_, port), is_open in zip(targets, result, strict=True) if is_open}


def all_ports_beside_nmap(concurrency: int, listeners: int) -> None:
    nmap = ensure_nmap()
    ready, ports = multiprocessing.Event(), multiprocessing.Manager().list()
    child = multiprocessing.Process(target=serve_listeners, args=(listeners, ready, ports), daemon=True)
    child.start()
    ready.wait(30)
    ours = set(ports)
    try:
        # Best of three on both sides: a busy moment of the machine should not decide the ratio.
        nmap_time, nmap_open = min(nmap_scan(nmap) for _ in range(3))
        versions_time, _ = nmap_scan(nmap, "-sV")
        sweep_time, sweep_open = min(asyncio.run(sweep_all_ports(concurrency)) for _ in range(3))
        spec = ScanSpec(services={"127.0.0.1/32": [(port, None) for port in range(1, 65536)]})  # type: ignore[misc]
        with tempfile.TemporaryDirectory() as tmp:
            scan_time, found, probes = asyncio.run(run_scan(Path(tmp), spec, concurrency))
    finally:
        child.terminate()
    rate = 65535 / nmap_time
    print(f"nmap -sT   65,535 ports in {nmap_time:.2f} s: {rate:,.0f} ports/s, {len(nmap_open)} open")
    print(
        f"connect pass 65,535 ports in {sweep_time:.2f} s: {65535 / sweep_time:,.0f} ports/s, {len(sweep_open)} open; "
        f"ratio to nmap {nmap_time / sweep_time:.2f}x"
    )
    print(
        f"whole scan 65,535 ports in {scan_time:.2f} s: {65535 / scan_time:,.0f} ports/s with banners grabbed, "
        f"{found} services found; ratio to nmap -sT {nmap_time / scan_time:.2f}x, "
        f"to nmap -sT -sV (banners too: {versions_time:.2f} s) {versions_time / scan_time:.2f}x"
    )
    missed = ours - sweep_open, ours - nmap_open
    print(
        f"open ports: the {len(ours)} bench services found by both: {not missed[0] and not missed[1]}; "
        f"same open ports as nmap: {sweep_open == nmap_open}"
        + (
            f" (only nmap: {sorted(nmap_open - sweep_open)}, only ours: {sorted(sweep_open - nmap_open)})"
            if sweep_open != nmap_open
            else ""
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--services", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--listeners", type=int, default=20)
    args = parser.parse_args()

    all_ports_beside_nmap(args.concurrency, args.listeners)

    ready = multiprocessing.Event()
    child = multiprocessing.Process(target=serve_greeters, args=(args.services, ready), daemon=True)
    child.start()
    ready.wait(30)
    try:
        blocks = {f"127.0.{5 + i // 250}.{1 + i % 250}/32": [(SERVICE_PORT, "http")] for i in range(args.services)}
        with tempfile.TemporaryDirectory() as tmp:
            elapsed, found, probes = asyncio.run(run_scan(Path(tmp), ScanSpec(services=blocks), args.concurrency))
        print(f"services: {found:,} of {args.services:,} found in {elapsed:.2f} s: {found / elapsed:,.0f} services/s")
    finally:
        child.terminate()

    peak = [rss_mb()]
    start_rss = peak[0]

    def sample() -> None:
        peak[0] = max(peak[0], rss_mb())

    closed = ScanSpec(services={"127.1.0.0/16": [(CLOSED_PORT, None)]})  # type: ignore[list-item]
    with tempfile.TemporaryDirectory() as tmp:
        elapsed, found, probes = asyncio.run(run_scan(Path(tmp), closed, args.concurrency, sample))
    print(
        f"closed /16: {probes:,} probes in {elapsed:.1f} s ({probes / elapsed:,.0f} probes/s), {found} found; "
        f"RSS {start_rss:.0f} MB before, peak {peak[0]:.0f} MB (+{peak[0] - start_rss:.1f} MB); "
        f"max RSS of the process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    )


if __name__ == "__main__":
    main()
