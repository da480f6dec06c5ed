"""The live-tail pane under the firehose.

A local firehose (a loopback stream host that writes demo banners at a fixed rate, in the
stream's json format) feeds the pane; the main API is the real backend.

    python bench/stream_pane.py headless [--rate 7500] [--banners 1000000]
        the pane headless (Textual's test driver): lag behind the stream, keystroke-to-screen
        latency, RSS sampled as it runs. Goals: no growing lag, latency under 100 ms, RSS flat
        within 10 MB.
    python bench/stream_pane.py pty [--rate 1500] [--seconds 20]
        the real dashboard in a pseudo-terminal at 80x24 and at 200x50: bytes written to the
        terminal per second while tailing. Goal: at most 50 KB/s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TICK = 0.01  # seconds between the firehose's writes


class Firehose:
    """Serves GET /{ns}/banners... with demo banners at ``rate`` a second, to every client."""

    def __init__(self, rate: float) -> None:
        import orjson

        from spyglass.datagen import generate

        self.rate = rate
        self.lines = [orjson.dumps(b) + b"\n" for b in generate(5000, seed=11)]
        self.sent = 0
        self.started = 0.0
        self.port = 0
        self._ready = threading.Event()
        threading.Thread(target=asyncio.run, args=(self._serve(),), daemon=True).start()
        self._ready.wait(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _serve(self) -> None:
        server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await server.serve_forever()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n")
        self.started = time.monotonic()
        n = 0
        try:
            while True:
                due = int((time.monotonic() - self.started) * self.rate)
                if due > n:
                    writer.write(b"".join(self.lines[i % len(self.lines)] for i in range(n, due)))
                    n = due
                    self.sent = n
                    await writer.drain()
                await asyncio.sleep(TICK)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def backend():
    import tempfile

    from spyglass.testing.backend import start_backend

    server, info = start_backend(Path(tempfile.mkdtemp()))
    server.__enter__()
    return server, info


async def headless(rate: float, banners: int) -> None:
    from textual import events

    from spyglass.tui.app import SpyglassApp
    from spyglass.tui.panes.stream import StreamPane
    from spyglass.tui.widgets.tail import Tail

    server, info = backend()
    hose = Firehose(rate)
    profile = info.profile(info.key(), stream_url=hose.url)
    app = SpyglassApp(profile)
    lags, latencies, rss = [], [], []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(1.0)
        await pilot.press("f7")
        pane = app.query_one(StreamPane)
        tail = app.query_one(Tail)
        painted: list[float] = []
        render_line = tail.render_line

        def timed_render_line(y: int):
            if not painted:
                painted.append(time.perf_counter())
            return render_line(y)

        tail.render_line = timed_render_line  # type: ignore[method-assign]
        while not hose.sent:
            await pilot.pause(0.1)
        next_sample = time.monotonic() + 5
        while hose.sent < banners:
            await asyncio.sleep(0.5)
            if time.monotonic() < next_sample:
                continue
            next_sample += 5
            lags.append((hose.sent - pane.buffer.received) / rate)  # seconds of stream not yet read
            rss.append(rss_mb())
            # A keystroke, as the terminal driver delivers it; it is on screen when the tail next
            # renders a line (Up leaves the live edge and repaints at once, whatever the cap).
            pressed = time.perf_counter()
            painted.clear()
            app.post_message(events.Key("up", None))
            while not painted or not pane.query_one(Tail).selected:
                await asyncio.sleep(0.001)
            latencies.append((painted[0] - pressed) * 1000)
            app.post_message(events.Key("end", None))
            print(
                f"{hose.sent:>9,} sent  {pane.buffer.received:>9,} read  lag {lags[-1]:5.2f} s  "
                f"key {latencies[-1]:5.1f} ms  rss {rss[-1]:6.1f} MB  dropped {pane.buffer.dropped:,}",
                flush=True,
            )
    server.__exit__(None, None, None)
    half = len(lags) // 2
    print(
        f"pane at {rate:,.0f}/s over {hose.sent:,} banners: lag first half {statistics.mean(lags[:half]):.2f} s, "
        f"second half {statistics.mean(lags[half:]):.2f} s (max {max(lags):.2f} s); keystroke to screen median "
        f"{statistics.median(latencies):.0f} ms, max {max(latencies):.0f} ms; "
        f"RSS {min(rss[1:]):.1f}..{max(rss[1:]):.1f} MB after the first sample "
        f"(growth {rss[-1] - rss[1]:+.1f} MB); dropped in the pane {pane.buffer.dropped:,}"
    )


def pty_bytes(rate: float, seconds: float) -> None:
    import fcntl
    import pty
    import select
    import struct
    import subprocess
    import termios

    server, info = backend()
    hose = Firehose(rate)
    key = info.key()
    for cols, rows in ((80, 24), (200, 50)):
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT / "src"),
            "TERM": "xterm-256color",
            "SPYGLASS_URL": info.url,
            "SPYGLASS_STREAM_URL": hose.url,
            "SPYGLASS_API_KEY": key,
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "spyglass", "--pane", "stream"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        counted, started, warmup = 0, time.monotonic(), 5.0
        sent_at_start = None
        while time.monotonic() - started < warmup + seconds:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    break
                if time.monotonic() - started >= warmup:
                    if sent_at_start is None:
                        sent_at_start = hose.sent
                    counted += len(data)
        streamed = hose.sent - (sent_at_start or 0)
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        os.close(master)
        print(
            f"pty {cols}x{rows}: {counted / seconds / 1000:.1f} KB/s written to the terminal while "
            f"{streamed / seconds:,.0f} banners/s streamed"
        )
    server.__exit__(None, None, None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("headless", "pty"))
    parser.add_argument("--rate", type=float)
    parser.add_argument("--banners", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    if args.mode == "headless":
        asyncio.run(headless(args.rate or 7500, args.banners))
    else:
        pty_bytes(args.rate or 1500, args.seconds)


if __name__ == "__main__":
    main()
