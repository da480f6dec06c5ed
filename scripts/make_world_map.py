"""Regenerate src/spyglass/tui/data/world.pbm.gz, the land mask the geo pane draws.

Source: Natural Earth 1:110m Admin 0 countries (public domain, naturalearthdata.com), as shipped
in geopandas 0.14.4 (geopandas/datasets/naturalearth_lowres). Needs pyshp. Run:

    pip download --no-deps geopandas==0.14.4 && unzip geopandas-0.14.4-*.whl 'geopandas/datasets/*'
    python scripts/make_world_map.py geopandas/datasets/naturalearth_lowres/naturalearth_lowres.shp

The mask is 720 x 360 cells of 0.5 degree (equirectangular, north-west first), as a gzipped
binary PBM (P4): about 5 KB.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import shapefile  # pyshp

WIDTH, HEIGHT = 720, 360
OUT = Path(__file__).resolve().parents[1] / "src" / "spyglass" / "tui" / "data" / "world.pbm.gz"


def rings(shape) -> list[list[tuple[float, float]]]:
    parts = list(shape.parts) + [len(shape.points)]
    return [shape.points[a:b] for a, b in zip(parts, parts[1:], strict=False)]


def rasterize(path: str) -> list[bytearray]:
    grid = [bytearray(WIDTH) for _ in range(HEIGHT)]
    for shape in shapefile.Reader(path).shapes():
        all_rings = rings(shape)
        for row in range(HEIGHT):
            lat = 90 - (row + 0.5) * 180 / HEIGHT
            crossings: list[float] = []
            for ring in all_rings:  # even-odd over every ring: holes come out right
                for (x1, y1), (x2, y2) in zip(ring, ring[1:] + ring[:1], strict=True):
                    if (y1 > lat) != (y2 > lat):
                        crossings.append(x1 + (lat - y1) * (x2 - x1) / (y2 - y1))
            crossings.sort()
            for left, right in zip(crossings[::2], crossings[1::2], strict=False):
                start = max(0, int((left + 180) * WIDTH / 360 + 0.5))
                end = min(WIDTH, int((right + 180) * WIDTH / 360 + 0.5))
                for col in range(start, end):
                    grid[row][col] = 1
    return grid


def main() -> None:
    grid = rasterize(sys.argv[1])
    body = bytearray()
    for row in grid:
        for i in range(0, WIDTH, 8):
            byte = 0
            for bit in range(8):
                byte |= row[i + bit] << (7 - bit)
            body.append(byte)
    OUT.write_bytes(gzip.compress(f"P4\n{WIDTH} {HEIGHT}\n".encode() + bytes(body), mtime=0))
    print(f"{OUT}: {OUT.stat().st_size} bytes, {sum(map(sum, grid))} land cells")


if __name__ == "__main__":
    main()
