"""Stream parse throughput: spyglass's StreamClient against the original service's official
Python library (PyPI ``shodan``, installed in the bench environment only), both reading the same
local stream at once.

The headline is like for like: spyglass's reader going past the members every banner has, so that
every banner is decoded whole, as the reference's are. Beside it, the lazy reader: the client's
default item, a StreamBanner whose port is read (decoded on arrival with the other members every
banner has; the rest waits for first use).

The backend runs as ``spyglass serve --namespace shodan`` (the library's paths); the banners are
published through ``POST /spyglass/collect``. Each reader is its own process, and its throughput
is banners parsed per CPU second of that process: the producer (the backend indexing every
banner) is slower than either reader, so wall time would measure the producer. The readers stop
at a last sentinel banner (the newest is never the one a full queue drops).

    pip install shodan   # the bench environment only
    python bench/stream.py [--banners 30000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SENTINEL_PORT = 65535
# spyglass's readers, each reading every banner's port: StreamBanners (the client's default: the
# members every banner has are decoded on arrival, the rest on first use), StreamBanners read past
# those members (so each is decoded whole, as the reference decodes every banner), and raw bytes
# (no parse: what the live-tail pane and saving take)
MODES = ("banner", "full", "raw")


def read_spyglass(url: str, key: str, mode: str) -> None:
    import asyncio

    from spyglass.client import Clients
    from spyglass.config import Profile

    async def run() -> None:
        profile = Profile(name="bench", url=url, key=key, namespace="shodan", rate=None)
        async with Clients.from_profile(profile) as clients:
            ready = lambda s: print("ready", flush=True) if s.status == "connected" else None  # noqa: E731
            count, started = 0, None
            async with clients.stream.banners(raw=mode == "raw", on_state=ready) as stream:
                async for banner in stream:
                    if started is None:
                        started = time.process_time()
                    count += 1
                    if mode == "raw":
                        port = SENTINEL_PORT if b'"port":65535' in banner else 0
                    else:
                        port = banner["port"]
                        if mode == "full":
                            banner.get("org")  # a member beyond the core: the whole banner is decoded
                    if port == SENTINEL_PORT:
                        break
            report(count, time.process_time() - (started or 0))

    asyncio.run(run())


def read_reference(url: str, key: str) -> None:
    import shodan

    api = shodan.Shodan(key)
    api.stream.base_url = f"{url}/stream"
    response = api.stream._create_stream("/shodan/banners")  # what Stream.banners() does first
    print("ready", flush=True)
    count, started = 0, None
    for banner in api.stream._iter_stream(response, False):  # ...and then
        if started is None:
            started = time.process_time()
        count += 1
        if banner["port"] == SENTINEL_PORT:
            break
    report(count, time.process_time() - (started or 0))


def report(count: int, cpu: float) -> None:
    print(json.dumps({"banners": count, "cpu": cpu}), flush=True)


def publish(url: str, key: str, total: int) -> None:
    import httpx

    from spyglass.datagen import generate

    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")
    banners = [{**b, "timestamp": now} for b in generate(total, seed=int(time.time()))]
    banners.append({**banners[0], "port": SENTINEL_PORT})
    with httpx.Client(timeout=120) as http:
        for start in range(0, len(banners), 2000):
            body = b"\n".join(json.dumps(b).encode() for b in banners[start : start + 2000])
            http.post(f"{url}/spyglass/collect", params={"key": key}, content=body).raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--banners", type=int, default=30_000)
    parser.add_argument("--reader", choices=(*MODES, "reference"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--key", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reader:
        if args.reader == "reference":
            read_reference(args.url, args.key)
        else:
            read_spyglass(args.url, args.key, args.reader)
        return

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with tempfile.TemporaryDirectory() as data:
        from spyglass.server.state.sqlite.accounts import Store

        store = Store(Path(data))
        key = store.create_key("enterprise", collector=True)  # it reads, and publishes through collect
        store.close()
        server = subprocess.Popen(
            [sys.executable, "-m", "spyglass", "serve", "--port", "0", "--namespace", "shodan", "--data", data],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert server.stdout is not None
            url = server.stdout.readline().split()[1]
            readers = {
                name: subprocess.Popen(
                    [sys.executable, __file__, "--reader", name, "--url", url, "--key", key],
                    stdout=subprocess.PIPE,
                    text=True,
                    env=env,
                )
                for name in (*MODES, "reference")
            }
            for reader in readers.values():
                assert reader.stdout is not None and reader.stdout.readline().strip() == "ready"
            publish(url, key, args.banners)
            results = {}
            for name, reader in readers.items():
                assert reader.stdout is not None
                results[name] = json.loads(reader.stdout.readline())
                reader.wait(60)
        finally:
            server.terminate()
            server.wait(30)
    rates = {name: r["banners"] / max(r["cpu"], 1e-9) for name, r in results.items()}
    for name, r in results.items():
        print(f"{name:9} {r['banners']:,} banners in {r['cpu']:.2f} CPU s: {rates[name]:,.0f} banners/s")
    # The headline is like for like: every banner decoded whole on both sides. The lazy reader
    # (members decoded on first use) is beside it, named as such.
    print(
        f"stream parse, every banner decoded whole: spyglass {rates['full']:,.0f} banners/s, reference "
        f"{rates['reference']:,.0f} banners/s, ratio {rates['full'] / rates['reference']:.1f}x"
    )
    print(
        f"lazy reader (four members decoded, the rest on first use): {rates['banner']:,.0f} banners/s, "
        f"ratio {rates['banner'] / rates['reference']:.1f}x"
    )


if __name__ == "__main__":
    main()
