"""Stream banners as one short inert line, for ``spyglass stream`` and the live-tail pane."""

from __future__ import annotations

from typing import Any

from spyglass.present.search import result_line
from spyglass.present.service import PRODUCT_WIDTH
from spyglass.present.values import as_dict, get_path, text_of


def stream_line(banner: Any, fields: list[str] | None = None, product_width: int = PRODUCT_WIDTH) -> str:
    """``HH:MM:SS address port/transport product ...`` or, with ``fields``, their values
    (dotted paths such as ``location.country_code``) separated by two spaces."""
    b = as_dict(banner)
    if fields:
        return "  ".join(text_of(get_path(b, f), max_chars=200) or "-" for f in fields)
    timestamp = b.get("timestamp")
    clock = timestamp[11:19] if isinstance(timestamp, str) and len(timestamp) >= 19 else "--:--:--"
    return f"{clock} {result_line(b, product_width)}"


def quiet_stream_hint(demo: bool, demo_rate: float) -> str | None:
    """With the demo data but no demo collector, the live stream stays empty: why, and what fills it
    (``serve`` prints it, the stream pane shows it)."""
    if demo and demo_rate <= 0:
        return (
            "the demo data is searchable, but nothing is collected live: the stream stays empty "
            "until a scan finds something or 'spyglass replay' sends banners; --demo-rate N collects N "
            "synthetic banners a second"
        )
    return None
