"""A bordered block of label/value lines: every value goes through the safe-text path."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from spyglass.present.service import Fact
from spyglass.present.values import text_of
from spyglass.safetext import clean

# How a screen stresses a fact whose tone present/ set; the words say it too (NO_COLOR, 16 colours).
TONES = {"strong": "bold", "bad": "bold red", "warn": "yellow"}


def bar(used_fraction: float, width: int = 20) -> str:
    """A horizontal bar of ``width`` cells, filled to ``used_fraction`` (0..1), in eighths."""
    cells = max(0.0, min(1.0, used_fraction)) * width
    full = int(cells)
    partial = "▏▎▍▌▋▊▉"[int((cells - full) * 8) - 1] if cells - full >= 0.125 else ""
    return ("█" * full + partial).ljust(width, "·")


def fact_grid(rows: Iterable[Fact | tuple[str, Any]]) -> Table:
    """Label/value rows as a grid. A value is a ``Text`` (kept), or any value (made inert text);
    a label is never read as markup."""
    table = Table.grid(padding=(0, 2), expand=True)  # as wide as its box: long values fold, never cut
    table.add_column(style="dim", no_wrap=True)
    table.add_column(overflow="fold", ratio=1)  # the values take the room; the labels keep theirs
    for row in rows:
        if isinstance(row, Fact):
            label, value = row.label, Text(row.value, style=TONES.get(row.tone, ""))
        else:
            label, value = row
        value_text = (
            value
            if isinstance(value, Text)
            else Text(text_of(value) if not isinstance(value, str) else clean(value, one_line=True))
        )
        table.add_row(Text(clean(label, one_line=True, max_chars=60)), value_text)
    return table


class Facts(Static):
    DEFAULT_CSS = """
    Facts { border: round $primary 50%; padding: 0 1; height: auto; }
    Facts:focus-within { border: round $primary; }
    """

    def __init__(self, title: str, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.border_title = title

    def show(self, rows: Iterable[Fact | tuple[str, Any]]) -> None:
        """Show ``rows``: ``present`` facts (e.g. ``host_facts(record)``) or (label, value) pairs."""
        self.update(fact_grid(rows))
