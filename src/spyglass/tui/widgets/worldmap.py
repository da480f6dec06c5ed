"""A world map in braille dots with markers, for the geo pane: each level its colour and mark.

Land comes from a 0.5 degree mask derived from Natural Earth (see tui/data/README.md).
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from spyglass.tui.console import on_console
from spyglass.tui.widgets.colours import theme_style

NORTH, SOUTH = 84.0, -58.0  # Antarctica and the far north cost rows and say little here
# Braille dot bits for (column, row) within a 2 x 4 cell.
_DOTS = {(0, 0): 0x01, (0, 1): 0x02, (0, 2): 0x04, (1, 0): 0x08, (1, 1): 0x10, (1, 2): 0x20, (0, 3): 0x40, (1, 3): 0x80}


@lru_cache(maxsize=1)
def land_mask() -> tuple[int, int, bytes]:
    """(width, height, one byte per cell) of the shipped land mask."""
    raw = gzip.decompress(files("spyglass.tui.data").joinpath("world.pbm.gz").read_bytes())
    magic, size, body = raw.split(b"\n", 2)
    assert magic == b"P4"
    width, height = map(int, size.split())
    stride = (width + 7) // 8
    cells = bytearray(width * height)
    for row in range(height):
        line = body[row * stride : (row + 1) * stride]
        for col in range(width):
            cells[row * width + col] = (line[col >> 3] >> (7 - (col & 7))) & 1
    return width, height, bytes(cells)


def is_land(lat: float, lon: float) -> bool:
    width, height, cells = land_mask()
    row = min(height - 1, max(0, int((90 - lat) * height / 180)))
    col = min(width - 1, max(0, int((lon + 180) * width / 360)))
    return bool(cells[row * width + col])


@lru_cache(maxsize=8)
def land_rows(columns: int, rows: int, plain: bool = False) -> tuple[str, ...]:
    """The land drawn in braille for a map of ``columns`` x ``rows`` cells; ``plain``: in ASCII
    (the Linux console has no braille), `:` for a cell mostly land and `.` for a coast."""
    lines = []
    for row in range(rows):
        chars = []
        for col in range(columns):
            bits = 0
            for (dx, dy), bit in _DOTS.items():
                lat = NORTH - ((row * 4 + dy + 0.5) / (rows * 4)) * (NORTH - SOUTH)
                lon = -180 + ((col * 2 + dx + 0.5) / (columns * 2)) * 360
                if is_land(lat, lon):
                    bits |= bit
            if plain:
                chars.append(" " if not bits else ":" if bits.bit_count() >= 4 else ".")
            else:
                chars.append(chr(0x2800 + bits) if bits else " ")
        lines.append("".join(chars))
    return tuple(lines)


@dataclass(frozen=True)
class Marker:
    lat: float
    lon: float
    level: str  # "good", "fair", "poor" or "down"


def cell_of(lat: float, lon: float, columns: int, rows: int) -> tuple[int, int] | None:
    if not (SOUTH <= lat <= NORTH and -180 <= lon <= 180):
        return None
    col = min(columns - 1, int((lon + 180) / 360 * columns))
    row = min(rows - 1, int((NORTH - lat) / (NORTH - SOUTH) * rows))
    return col, row


LEVEL_COLOUR = {"good": "success", "fair": "warning", "poor": "error", "down": "foreground-muted"}
# Each level its own mark too: under NO_COLOR (or to a reader who tells no colours apart) the
# colour alone said nothing, every marker a ●. The Linux console's fonts have ASCII only.
LEVEL_MARK = {"good": "●", "fair": "◆", "poor": "▲", "down": "○"}
CONSOLE_MARK = {"good": "*", "fair": "+", "poor": "!", "down": "o"}


def mark_of(app: object, level: str) -> str:
    """The marker of ``level`` on the map and in its legend."""
    return (CONSOLE_MARK if on_console(app) else LEVEL_MARK)[level]


def level_for(rtt_ms: float | None) -> str:
    if rtt_ms is None:
        return "down"
    return "good" if rtt_ms < 50 else "fair" if rtt_ms < 150 else "poor"


class WorldMap(Widget):
    DEFAULT_CSS = """
    WorldMap { height: 1fr; min-height: 8; }
    """

    markers: reactive[tuple[Marker, ...]] = reactive(())

    def render(self) -> Text:
        columns, rows = self.size.width, self.size.height
        if columns < 10 or rows < 4:
            return Text("")
        grid = [list(line) for line in land_rows(columns, rows, on_console(self.app))]
        marks: list[tuple[int, Style]] = []  # offsets into the text, each a one-cell marker
        for marker in self.markers:
            cell = cell_of(marker.lat, marker.lon, columns, rows)
            if cell is not None:
                col, row = cell
                grid[row][col] = mark_of(self.app, marker.level)
                marks.append((row * (columns + 1) + col, theme_style(self.app, LEVEL_COLOUR[marker.level], bold=True)))
        # One span for the land and one per marker: cheap to render and to redraw.
        text = Text(
            "\n".join("".join(chars) for chars in grid), style=theme_style(self.app, "primary", dim=True), no_wrap=True
        )
        for offset, style in marks:
            text.stylize(style, offset, offset + 1)
        return text
