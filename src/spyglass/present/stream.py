"""Stream banners as one short inert line, for ``spyglass stream`` and the live-tail pane, and
in detail for the pane's selected banner."""

from __future__ import annotations

from typing import Any

from spyglass.present.search import result_line
from spyglass.present.service import PRODUCT_WIDTH, product_line
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


DETAIL_DATA_LINES = 40  # of the selected banner's raw data (the detail box shows what its height allows)


def detail_lines(banner: dict) -> list[str]:
    """The selected banner, briefly: who, where, what, and the start of its raw data."""
    country = text_of(get_path(banner, "location.country_name")) or text_of(get_path(banner, "location.country_code"))
    location = ", ".join(t for t in (text_of(get_path(banner, "location.city")), country) if t)
    facts = [
        ("seen", banner.get("timestamp")),
        ("org", banner.get("org")),
        ("asn", banner.get("asn")),
        ("location", location),
        ("hostnames", banner.get("hostnames")),
        ("domains", banner.get("domains")),
        ("product", product_line(banner)),
        ("os", banner.get("os")),
        ("tags", banner.get("tags")),
        ("title", get_path(banner, "http.title")),
        ("server", get_path(banner, "http.server")),
        ("cert", get_path(banner, "ssl.cert.subject.CN")),
        ("cpe", banner.get("cpe23") or banner.get("cpe")),
        ("vulns", list(banner["vulns"]) if isinstance(banner.get("vulns"), dict) else banner.get("vulns")),
    ]
    lines = [stream_line(banner)]
    lines += [f"  {name:<9} {text_of(value, max_chars=300)}" for name, value in facts if text_of(value)]
    data = banner.get("data")
    if isinstance(data, str) and data.strip():
        lines += ["  " + line for line in data.strip().splitlines()[:DETAIL_DATA_LINES]]
    return lines


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
