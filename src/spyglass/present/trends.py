"""Trends as series, tables and plotext charts, for ``spyglass trends`` and the trends pane.

Charts are drawn on a plotext figure (``plotext._figure._figure_class``, which textual-plotext's
``Plot`` is too) with explicit x and y ticks: plotext's own tick choice for crowded labels depends
on ``PYTHONHASHSEED`` (DESIGN.md), explicit ones render the same every run. Series use the bright
ANSI colours, so a 16-colour terminal shows them as drawn. Legends are not drawn by plotext (its
legend covers the bars of a small chart): callers print :func:`legend` beside the chart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len

from spyglass.present.values import pad
from spyglass.safetext import clean, fit

# (plotext colour, Rich colour) of each series, in order: bright ANSI colours only.
PALETTE = (
    ("cyan+", "bright_cyan"),
    ("orange+", "bright_yellow"),
    ("magenta+", "bright_magenta"),
    ("green+", "bright_green"),
    ("red+", "bright_red"),
    ("blue+", "bright_blue"),
    ("gray+", "white"),
)
# The fill of each series' bars, in order: stacked bars read apart without colour too (a pipe).
FILLS = ("█", "▓", "▒", "░", "▞", "▚", "▪")
PLAIN_FILLS = ("█", "▓", "▒", "░", "#", "=", "+")  # the Linux console's fonts (CP437) have these
# The points of each line where colour cannot tell them apart (NO_COLOR) or braille is missing.
LINE_MARKS = ("*", "+", "o", "x", "#", "=", "@")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
LABEL_WIDTH = 24  # cells of a facet value in a legend or a column heading
KINDS = ("bar", "line")


@dataclass
class Series:
    label: str  # screen text already (see :func:`label`)
    counts: list[int]
    unknown: frozenset[int] = frozenset()  # months whose answer did not include it (charted as 0)


def label(value: Any, width: int = LABEL_WIDTH) -> str:
    """An untrusted value (a facet value, a query) as a one-line label of at most ``width`` cells."""
    return fit(clean(value, one_line=True), width)


def month_window(months: Sequence[str], start: str | None = None, end: str | None = None) -> slice:
    """The months from ``start`` to ``end`` (``YYYY-MM``, both included, either open)."""
    first = next((i for i, m in enumerate(months) if not start or m >= start), len(months))
    last = next((i for i in range(len(months) - 1, -1, -1) if not end or months[i] <= end), -1)
    return slice(first, max(first, last + 1))


def range_problem(start: str | None, end: str | None) -> str | None:
    """Why ``start``..``end`` (``YYYY-MM``) holds no month whatever the index holds; None if it may."""
    if start and end and start > end:
        return f"the start month {start} is after the end month {end}"
    return None


def within(response, window: slice):
    """``response`` cut to the months of ``window``: its matches, each facet's months, and
    ``total`` as the sum of those months' matches."""
    matches = response.matches[window]
    return response.model_copy(
        update={
            "matches": matches,
            "facets": {name: months[window] for name, months in response.facets.items()},
            "total": sum(m.count for m in matches),
        }
    )


def total_series(response, name: str) -> Series:
    return Series(label(name), [m.count for m in response.matches])


def facet_series(response, facet: str, top: int = 5, window: slice = slice(None)) -> list[Series]:
    """The ``top`` values of ``facet`` over the months of ``window`` (by their sum), each as a
    series over those months; a month whose top values did not include it counts 0 and is
    ``unknown`` (it may have had a few)."""
    per_month = [{v.value: v.count for v in month.values} for month in response.facets.get(facet, [])][window]
    sums: dict[str, int] = {}
    for counts in per_month:
        for value, count in counts.items():
            sums[value] = sums.get(value, 0) + count
    chosen = sorted(sums, key=lambda v: (-sums[v], v))[:top]
    return [
        Series(
            label(v),
            [counts.get(v, 0) for counts in per_month],
            frozenset(i for i, counts in enumerate(per_month) if v not in counts),
        )
        for v in chosen
    ]


def x_ticks(months: Sequence[str], width: int) -> list[int]:
    """Indexes of the months to label on a chart ``width`` cells wide: a label takes 7 cells and
    3 of gap, so no two collide (plotext moves colliding labels in a hash-seed dependent way)."""
    if not months:
        return []
    room = max(1, (width - 8) // 10)
    step = max(1, -(-len(months) // room))
    return list(range(0, len(months), step))


def y_ticks(top: int) -> list[int]:
    """0 and up to four round steps covering ``top``."""
    if top <= 0:
        return [0, 1]
    raw = top / 4
    magnitude = 10 ** (len(str(int(raw))) - 1) if raw >= 1 else 1
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    return list(range(0, -(-top // step) * step + 1, step))


def short(value: int) -> str:
    """A tick label in at most 5 cells: 950, 12k, 1.2M, 2G."""
    if value >= 1_000_000_000:
        return f"{value / 1_000_000_000:.3g}G"
    if value >= 1_000_000:
        return f"{value / 1_000_000:.3g}M"
    if value >= 10_000:
        return f"{value // 1000}k"
    return str(value)


@dataclass(frozen=True)
class Look:
    """How a chart can tell its series apart here."""

    plain: bool = False  # a Linux console font: no braille, no fills it lacks
    mono: bool = False  # no colour (NO_COLOR): each line has its own mark
    stack: bool = True  # several series as bars: stacked (parts of a whole), else side by side (compared)

    def line_mark(self, index: int) -> str:
        return LINE_MARKS[index % len(LINE_MARKS)] if self.plain or self.mono else "braille"

    def swatch(self, index: int, kind: str) -> str:
        """What the legend shows for series ``index``: its bars' fill, or its line (or mark)."""
        if kind == "bar":
            return FILLS[index % len(FILLS)]
        mark = self.line_mark(index)
        return "━" if mark == "braille" else mark


def build(
    fig, months: Sequence[str], series: Sequence[Series], kind: str, width: int, height: int, look: Look = Look()
) -> str:
    """``series`` over ``months`` drawn on plotext figure ``fig``, as text with ANSI colours: one
    series as bars, several as stacked or side-by-side bars (``bar``) or as lines (``line``)."""
    ticks = draw(fig, months, series, kind, width, height, look)
    return label_months(fig.build(), [months[i] for i in ticks])


def label_months(chart: str, labels: Sequence[str]) -> str:
    """``chart`` with ``labels`` written under the ticks of its x axis (one per ``┬``), left to
    right, each centred on its tick where it fits and left out where it would touch the one before.

    Plotext places the labels itself when given them, but moves labels near each other or near an
    edge differently from one run to the next (it depends on ``PYTHONHASHSEED``); this does not."""
    lines = chart.split("\n")
    axis = next((i for i, line in enumerate(lines) if "└" in line), None)
    if axis is None or axis + 1 >= len(lines):
        return chart
    plain = _ANSI.sub("", lines[axis])
    row = [" "] * len(plain)
    end = -2
    for col, label in zip((i for i, c in enumerate(plain) if c == "┬"), labels, strict=False):
        start = min(max(col - len(label) // 2, 0), len(row) - len(label))
        if start <= end + 1 or start < 0:
            continue
        row[start : start + len(label)] = label
        end = start + len(label) - 1
    lines[axis + 1] = "".join(row)
    return "\n".join(lines)


def draw(
    fig, months: Sequence[str], series: Sequence[Series], kind: str, width: int, height: int, look: Look = Look()
) -> list[int]:
    """Draw on ``fig`` with unlabelled x ticks (see :func:`label_months`); returns the indexes of
    the months ticked."""
    fig.clear_data()
    fig._limit_size(False, False)  # the size given, not the terminal's (a pipe, or a widget's)
    fig.plotsize(width, height)
    fig.xlabel("")
    fig.title("")
    xs = list(range(len(months)))
    if not months or not series:
        fig.xticks([], [])
        fig.yticks([], [])
        return []
    colours = [PALETTE[i % len(PALETTE)][0] for i in range(len(series))]
    fill_set = PLAIN_FILLS if look.plain else FILLS
    fills = [fill_set[i % len(fill_set)] for i in range(len(series))]
    if kind == "line":
        for i, (s, colour) in enumerate(zip(series, colours, strict=True)):
            fig.plot(xs, s.counts, color=colour, marker=look.line_mark(i))
        top = max(max(s.counts) for s in series)
    elif len(series) == 1:
        fig.bar(xs, series[0].counts, color=colours[0], width=0.8, marker=fills[0])
        top = max(series[0].counts)
    elif not look.stack:
        fig.multiple_bar(xs, [s.counts for s in series], color=colours, width=0.8, marker=fills)
        top = max(max(s.counts) for s in series)
    else:
        fig.stacked_bar(xs, [s.counts for s in series], color=colours, width=0.8, marker=fills)
        top = max(sum(column) for column in zip(*(s.counts for s in series), strict=True))
    ticks = x_ticks(months, width)
    fig.xticks(ticks, [""] * len(ticks))
    ys = y_ticks(top)
    fig.yticks(ys, [short(y) for y in ys])
    fig.ylim(0, ys[-1])
    fig.xlim(-0.6, len(months) - 0.4)
    return ticks


def chart_text(months: Sequence[str], series: Sequence[Series], kind: str, width: int, height: int) -> str:
    """The chart as text with ANSI colours (plotext's ``clear`` theme: no background)."""
    from plotext._figure import _figure_class

    fig = _figure_class()
    fig.theme("clear")
    return build(fig, months, series, kind, width, height)


def legend(series: Sequence[Series], kind: str = "bar", look: Look = Look()) -> list[tuple[str, str, str]]:
    """(Rich colour, swatch, label) of each series, in drawing order: its bars' fill, or its line."""
    return [(PALETTE[i % len(PALETTE)][1], look.swatch(i, kind), s.label) for i, s in enumerate(series)]


def table(months: Sequence[str], series: Sequence[Series]) -> tuple[list[str], list[list[str]]]:
    """The numbers of a chart: a row per month, a column per series (``·`` where a facet value was
    not among that month's top values)."""
    header = ["Month", *(s.label for s in series)]
    rows = [[month, *("·" if i in s.unknown else f"{s.counts[i]:,}" for s in series)] for i, month in enumerate(months)]
    return header, rows


def table_lines(months: Sequence[str], series: Sequence[Series]) -> list[str]:
    """The table as aligned text: months left, numbers right (labels measured in cells)."""
    header, rows = table(months, series)
    widths = [max(cell_len(r[c]) for r in [header, *rows]) for c in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            pad(v, w) if c == 0 else " " * (w - cell_len(v)) + v
            for c, (v, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return [line(header), *(line(row) for row in rows)]
