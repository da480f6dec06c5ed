"""Scans as inert text, for the scan monitor pane and ``spyglass scan``."""

from __future__ import annotations

from datetime import UTC, datetime

from spyglass.models.scan import ScanListItem, ScanState, ScanStatus
from spyglass.present.values import plural
from spyglass.safetext import clean

IN_FLIGHT = (ScanState.SUBMITTING, ScanState.QUEUE, ScanState.PROCESSING)


def in_flight(scan: ScanStatus | ScanListItem) -> bool:
    return scan.status in IN_FLIGHT


def age(created: str | None, now: datetime | None = None) -> str:
    """How long ago a scan was created, coarsely: "42s", "5m", "3h", "2d"."""
    if not created:
        return "-"
    try:
        then = datetime.fromisoformat(created.replace("Z", "+00:00"))
    except ValueError:
        return clean(created, one_line=True, max_chars=19)
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    seconds = max(0, int(((now or datetime.now(UTC)) - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def progress(scan: ScanStatus | ScanListItem) -> str:
    """How far it got, e.g. "37% of 5,000 probes"; "-" when the server does not say (the original
    service tells only the status)."""
    fraction = scan.fraction
    if fraction is None:
        return "-"
    return f"{fraction:.0%} of {plural(scan.probes or 0, 'probe')}"


def found(scan: ScanStatus | ScanListItem) -> str:
    return f"{scan.found:,} found" if scan.found is not None else ""


def status_line(scan: ScanStatus | ScanListItem, now: datetime | None = None) -> str:
    """One scan as a CLI line: id, status, size, age and progress."""
    size = (scan.count if isinstance(scan, ScanStatus) else scan.size) or 0
    ips = "IP " if size == 1 else "IPs"  # (the column keeps its width)
    return (
        f"{clean(scan.id, one_line=True, max_chars=32):<16}  {clean(str(scan.status), one_line=True):<10}  "
        f"{size:>7,} {ips}  {age(scan.created, now):>4} ago  {progress(scan)}  {found(scan)}"
    )
