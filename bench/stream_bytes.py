"""Bytes the stream pane writes to its terminal, against ``spyglass stream`` for the same banners.

The real dashboard and the real CLI under pseudo-terminals, on one embedded backend whose collector
is handed demo banners at the demo collector's pace (2 a second), the pane's view already full
(see spyglass/testing/tailbytes.py). Goal (issue 45): the pane at most 10 times the CLI's bytes.

    python bench/stream_bytes.py [--banners 20] [--every 0.5] [--term xterm-256color]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from spyglass.testing.tailbytes import measure

SIZES = ((80, 24), (140, 42))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--banners", type=int, default=20)
    parser.add_argument("--every", type=float, default=0.5, help="seconds between banners")
    parser.add_argument("--term", default="xterm-256color")
    args = parser.parse_args()
    for cols, rows in SIZES:
        with tempfile.TemporaryDirectory() as tmp:
            f = measure(Path(tmp), cols, rows, args.banners, args.every, args.term)
        print(
            f"{cols}x{rows}: pane {f.pane / f.seconds:,.0f} B/s, spyglass stream {f.cli / f.seconds:,.0f} B/s "
            f"for {f.banners} banners in {f.seconds:.1f} s ({f.pane / f.banners:,.0f} and "
            f"{f.cli / f.banners:,.0f} B a banner): {f.ratio:.1f}x",
            flush=True,
        )


if __name__ == "__main__":
    main()
