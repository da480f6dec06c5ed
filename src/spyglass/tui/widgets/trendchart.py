"""A monthly chart: textual-plotext's widget drawing :mod:`spyglass.present.trends` series.

Plotext's ``clear`` theme leaves the background and axes to the terminal's own colours, and the
series use bright ANSI colours: the chart reads the same in 16 colours as in true colour. Ticks
are explicit (present.trends.draw), so it renders the same every run.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import RenderResult
from textual_plotext import PlotextPlot

from spyglass.present.trends import Look, Series, build
from spyglass.tui.console import on_console


class TrendChart(PlotextPlot):
    DEFAULT_CSS = """
    TrendChart { height: 1fr; min-height: 6; }
    TrendChart:focus { background: $boost; }
    """
    can_focus = True

    def __init__(self, empty: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.set_reactive(PlotextPlot.theme, "clear")
        self.empty = empty  # what shows before there is anything to draw
        self.months: list[str] = []
        self.series: list[Series] = []
        self.kind = "bar"
        self.stack = True

    def show(self, months: Sequence[str], series: Sequence[Series], kind: str, stack: bool = True) -> None:
        self.months, self.series, self.kind, self.stack = list(months), list(series), kind, stack
        self.refresh()

    @property
    def look(self) -> Look:
        """How the series are told apart on this terminal: marks where there is no colour."""
        return Look(plain=on_console(self.app), mono=self.app.no_color, stack=self.stack)

    def render(self) -> RenderResult:
        if not self.months or not self.series:
            return Text(self.empty, style="italic")
        self.plt.theme("clear")
        return Text.from_ansi(build(self.plt, self.months, self.series, self.kind, *self.size, self.look))
