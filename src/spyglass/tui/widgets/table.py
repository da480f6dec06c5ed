"""The panes' table: vi keys, columns sorted by a click or a key, and columns that fit the width
(the least useful ones go first when the table is narrow; a flexible one takes the room left)."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events, on
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.widgets import DataTable

PADDING = 2  # DataTable draws one cell of padding each side of a column


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int  # the cells it wants (the least it takes, for the flexible column)
    rank: int = 0  # 0 is kept longest; the highest rank is dropped first when room runs out
    flex: bool = False  # takes the room the other columns leave
    # A column whose cell shows here, dimmed, where this one's is empty while that one is not shown
    # (a row with no title shows its product when the product column gave way to the width).
    stand_in: str = ""


def fit_columns(columns: list[Column], width: int, wants: Mapping[str, int] | None = None) -> list[tuple[Column, int]]:
    """The columns that fit in ``width`` cells, in their own order, each with its width: by rank
    until one does not fit (a less useful narrow column never takes the place of a wider one).
    The room left goes first to columns whose cells are wider than they are (``wants``: the widest
    cell of each), most useful first, then to the flexible column."""
    kept: list[Column] = []
    used = 0
    for column in sorted(columns, key=lambda c: c.rank):
        if kept and used + column.width + PADDING > width:
            break
        kept.append(column)
        used += column.width + PADDING
    spare = max(0, width - used)
    widths = {c.key: c.width for c in kept}
    for column in kept:  # (in rank order) a description cut short beside empty cells helps nobody
        give = min(spare, max(0, (wants or {}).get(column.key, 0) - column.width))
        if not column.flex and give:
            widths[column.key] += give
            spare -= give
    return [(c, widths[c.key] + (spare if c.flex else 0)) for c in columns if c in kept]


def cell_width(value: Any) -> int:
    return value.cell_len if isinstance(value, Text) else len(str(value))


def sort_key(cell: Any) -> tuple[int, float | str]:
    """Numbers (a port in "443/tcp" too) by value, addresses in address order, the rest as text."""
    text = cell.plain if isinstance(cell, Text) else str(cell)
    head = text.split("/", 1)[0].strip()
    try:
        return 0, float(head)
    except ValueError:
        pass
    try:
        address = ipaddress.ip_address(head)
    except ValueError:
        return 2, text.casefold()
    return 1, f"{address.version}{int(address):039d}"  # exact order, IPv4 before IPv6


def inert_cell(value: Any) -> Any:
    """A cell as the table shows it: text is never read as markup (DataTable would parse a str), and
    text wider than its column ends in "…" instead of being cut mid-word without a sign."""
    if isinstance(value, str):
        return Text(value, no_wrap=True, overflow="ellipsis", end="")
    if isinstance(value, Text):
        value = value.copy()
        value.no_wrap, value.overflow = True, "ellipsis"
    return value


class Table(DataTable):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="table.down"),
        Binding("k", "cursor_up", "Up", show=False, id="table.up"),
        Binding("g", "scroll_top", "First row", show=False, id="table.first"),
        Binding("G", "scroll_bottom", "Last row", show=False, id="table.last"),
        Binding("s", "sort_next", "Sort by the next column", show=False, id="table.sort"),
        Binding("S", "sort_reverse", "Reverse the sort", show=False, id="table.reverse"),
    ]

    def __init__(self, columns: list[Column], *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.specs = columns
        self.records: dict[str, dict[str, Any]] = {}  # every row, all columns, by row key
        self.shown: list[tuple[Column, int]] = []
        self.sorted_by: tuple[str, bool] | None = None  # (column key, reverse)
        self._fit_pending = False

    def on_mount(self) -> None:
        self._layout(self.room())

    def use_columns(self, columns: list[Column]) -> None:
        """Other columns (another view of the same records): laid out again at once."""
        if columns != self.specs:
            self.specs, self.shown = columns, []
            if self.sorted_by and self.sorted_by[0] not in {c.key for c in columns}:
                self.sorted_by = None  # sorted by a column these do not have
            self._layout(self.room())

    def room(self) -> int:
        # The content's width (inside the border and padding: size excludes them already) less the
        # vertical scrollbar's room, kept whether it shows or not: rows come after the columns.
        return max(20, self.size.width - self.styles.scrollbar_size_vertical)

    def on_resize(self, event: events.Resize) -> None:
        self._layout(self.room())

    def _layout(self, width: int) -> None:
        shown = fit_columns(self.specs, width, self._wants())
        if shown == self.shown:
            return
        if [c for c, _ in shown] == [c for c, _ in self.shown]:
            self._resize_columns(shown)  # the same columns: no need to add every row again
            return
        row, selected = self.cursor_row, self.key_at(self.cursor_row)
        self.shown = shown
        self.clear(columns=True)
        for column, cells in shown:
            self.add_column(column.label, key=column.key, width=cells)
        for key, record in self.records.items():
            super().add_row(*self._cells(record), key=key)
        self._apply_sort()
        if selected is not None and selected in self.records:  # the same record, wherever sorted
            row = self.get_row_index(selected)
        if self.row_count:
            self.move_cursor(row=min(row, self.row_count - 1), animate=False)

    def _resize_columns(self, shown: list[tuple[Column, int]]) -> None:
        self.shown = shown
        for column, (_, cells) in zip(self.ordered_columns, shown, strict=False):
            column.width = cells
        # DataTable has no public call for new widths: drop its render caches, re-measure when idle.
        self._clear_caches()
        self._require_update_dimensions = True
        self.refresh()

    def _wants(self) -> dict[str, int]:
        """The widest cell of each column, over every record."""
        wants: dict[str, int] = {}
        for record in self.records.values():
            for key, value in record.items():
                wants[key] = max(wants.get(key, 0), cell_width(value))
        return wants

    def _fit_soon(self) -> None:
        """Lay the columns out again for the records' widths, once after a batch of changes."""
        if not self._fit_pending:
            self._fit_pending = True
            self.call_after_refresh(self._fit_content)

    def _fit_content(self) -> None:
        self._fit_pending = False
        self._layout(self.room())

    def _cells(self, record: dict[str, Any]) -> list[Any]:
        return [inert_cell(self._cell(record, column)) for column, _ in self.shown]

    def _cell(self, record: dict[str, Any], column: Column) -> Any:
        value = record.get(column.key, "")
        if column.stand_in and not cell_width(value) and all(c.key != column.stand_in for c, _ in self.shown):
            other = record.get(column.stand_in, "")
            return Text(other.plain if isinstance(other, Text) else str(other), style="dim")
        return value

    def add_record(self, record: dict[str, Any], key: str | None = None) -> str:
        key = key if key is not None else str(len(self.records))
        self.records[key] = record
        super().add_row(*self._cells(record), key=key)
        self._fit_soon()
        return key

    def update_record(self, key: str, record: dict[str, Any]) -> None:
        self.records[key] = record
        for column, _ in self.shown:
            self.update_cell(key, column.key, inert_cell(self._cell(record, column)))
        self._fit_soon()

    def clear_records(self) -> None:
        self.records.clear()
        self.clear()

    def key_at(self, row: int) -> str | None:
        """The record key of the row shown at ``row`` (rows move when sorted)."""
        if not 0 <= row < self.row_count:
            return None
        row_key, _ = self.coordinate_to_cell_key(Coordinate(row, 0))
        return row_key.value

    # -- sorting ------------------------------------------------------------------------------
    def sort_by(self, column: str, reverse: bool = False) -> None:
        self.sorted_by = (column, reverse)
        self._apply_sort()

    def _apply_sort(self) -> None:
        if self.sorted_by and any(c.key == self.sorted_by[0] for c, _ in self.shown):
            self.sort(self.sorted_by[0], key=sort_key, reverse=self.sorted_by[1])

    @on(DataTable.HeaderSelected)
    def _header_clicked(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        column = event.column_key.value or ""
        current = self.sorted_by
        self.sort_by(column, reverse=bool(current and current[0] == column and not current[1]))

    def action_sort_next(self) -> None:
        keys = [c.key for c, _ in self.shown]
        if not keys:
            return
        at = keys.index(self.sorted_by[0]) + 1 if self.sorted_by and self.sorted_by[0] in keys else 0
        self.sort_by(keys[at % len(keys)])
        self.app.notify(f"Sorted by {self.shown[at % len(keys)][0].label}", timeout=2, markup=False)

    def action_sort_reverse(self) -> None:
        if self.sorted_by:
            self.sort_by(self.sorted_by[0], not self.sorted_by[1])
