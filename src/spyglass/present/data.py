"""Bulk data as inert text: datasets, their files (size, time, SHA-1) and download progress."""

from __future__ import annotations

from datetime import UTC, datetime

from spyglass.models import Dataset, DatasetFile
from spyglass.safetext import clean

UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def size_text(size: int | float) -> str:
    """``103750058939`` -> ``96.6 GiB``: bytes in binary units, three figures."""
    value, unit = float(size), 0
    while value >= 1024 and unit < len(UNITS) - 1:
        value /= 1024
        unit += 1
    return f"{int(value)} B" if unit == 0 else f"{value:.1f} {UNITS[unit]}"


def stamp_text(epoch_ms: int) -> str:
    """A file's timestamp (epoch milliseconds) as UTC, to the minute."""
    try:
        return datetime.fromtimestamp(epoch_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return str(epoch_ms)


def dataset_row(d: Dataset) -> list[str]:
    return [clean(d.name, one_line=True), clean(d.scope, one_line=True), clean(d.description, one_line=True)]


def file_row(f: DatasetFile) -> list[str]:
    return [
        clean(f.name, one_line=True),
        size_text(f.size),
        stamp_text(f.timestamp),
        clean(f.sha1 or "-", one_line=True),
    ]


def progress_text(done: int, total: int | None) -> str:
    """``12.0 MiB of 96.6 GiB`` (or only what arrived when the size is unknown)."""
    return f"{size_text(done)} of {size_text(total)}" if total else size_text(done)


def table(rows: list[list[str]]) -> list[str]:
    """Rows as aligned lines (the last column unpadded)."""
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return ["  ".join([*(cell.ljust(w) for cell, w in zip(r, widths, strict=False)), r[-1]]) for r in rows]
