"""The scanner: services scanned per second against loopback services, and memory while scanning a
/16 of closed loopback ports.

1. ``--services`` HTTP-ish services (a line-speaking greeter on 127.0.5.x:PORT, in a separate
   process so the scanner has its own core) are scanned as one scan; services/s = found / time.
2. 127.1.0.0/16 on one closed port (65,536 probes): probes/s and the peak RSS over the run.

    python bench/scan.py [--services 500] [--concurrency 256]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spyglass.netools.scantargets import ScanSpec  # noqa: E402
from spyglass.server.collect import Collector  # noqa: E402
from spyglass.server.index import BannerIndex  # noqa: E402
from spyglass.server.scanner.protocols import PORTS  # noqa: E402
from spyglass.server.scanner.service import ScanService  # noqa: E402
from spyglass.server.scanner.store import ScanStore  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--services", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=256)
    args = parser.parse_args()

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
