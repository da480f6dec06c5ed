"""A bordered block of label/value lines: every value goes through the safe-text path."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from spyglass.safetext import clean


def bar(used_fraction: float, width: int = 20) -> str:
    """A horizontal bar of ``width`` cells, filled to ``used_fraction`` (0..1), in eighths."""
    cells = max(0.0, min(1.0, used_fraction)) * width
    full = int(cells)
    partial = "▏▎▍▌▋▊▉"[int((cells - full) * 8) - 1] if cells - full >= 0.125 else ""
    return ("█" * full + partial).ljust(width, "·")


class Facts(Static):
    DEFAULT_CSS = """
    Facts { border: round $primary 50%; padding: 0 1; height: auto; }
    Facts:focus-within { border: round $primary; }
    """

    def __init__(self, title: str, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self.border_title = title

    def show(self, rows: Iterable[tuple[str, Any]]) -> None:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="dim", no_wrap=True)
        table.add_column(overflow="fold")
        for label, value in rows:
            value_text = value if isinstance(value, Text) else Text(clean(value, one_line=True))
            table.add_row(Text(label), value_text)
        self.update(table)
