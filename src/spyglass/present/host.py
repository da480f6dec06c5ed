"""A host as inert text: its summary, its services table (with what changed between scans), and
the whole of it for ``spyglass host``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rich.cells import cell_len

from spyglass.present.seen import seen_facts, seen_lines
from spyglass.present.service import (
    Fact,
    ServiceText,
    Vuln,
    changes,
    describe_service,
    module_of,
    product_line,
    seen,
    service_key,
    service_line,
)
from spyglass.present.values import as_dict, empty, get_path, head, number, pad, text_of


def _host_member(r: Mapping, name: str) -> Any:
    value = r.get(name)
    return get_path(r, f"location.{name}") if empty(value) else value


def host_facts(record: Any) -> list[Fact]:
    """The summary of a host record; "-" where a value is unknown, so the summary keeps its shape."""
    r = as_dict(record)
    country = text_of(_host_member(r, "country_name")) or text_of(_host_member(r, "country_code"))
    where = ", ".join(t for t in (text_of(_host_member(r, k)) for k in ("city", "region_code")) if t)
    where = ", ".join(t for t in (where, country) if t)  # a banner may carry only the country's code
    lat, lon = number(_host_member(r, "latitude")), number(_host_member(r, "longitude"))
    coords = f" ({lat:.2f}, {lon:.2f})" if lat is not None and lon is not None else ""
    vulns = r.get("vulns")
    vulns = [cve for cve, _ in head(vulns, 60)] if isinstance(vulns, Mapping) else vulns
    # Most useful first: a short terminal shows the top rows.
    facts = [
        Fact("ip", text_of(r.get("ip_str") or r.get("ipv6") or r.get("ip")) or "-", "strong"),
        Fact("org", text_of(r.get("org")) or "-"),
        Fact("ports", text_of(r.get("ports")) or "-"),
        Fact("vulns", text_of(vulns) or "-", "bad" if not empty(vulns) else ""),
        Fact("location", (where + coords).strip() or "-"),
        Fact("hostnames", text_of(r.get("hostnames")) or "-"),
        Fact("asn", text_of(r.get("asn")) or "-"),
        Fact("isp", text_of(r.get("isp")) or "-"),
        Fact("os", text_of(r.get("os")) or "-"),
        Fact("domains", text_of(r.get("domains")) or "-"),
        Fact("tags", text_of(r.get("tags")) or "-"),
        Fact("last update", seen(r.get("last_update")) or "-"),
        *seen_facts(r),  # what scans saw besides open services: up, ports closed or filtered
    ]
    return facts


def services_of(record: Any) -> list[dict]:
    data = as_dict(record).get("data")
    return (
        [as_dict(b) for b in data if isinstance(b, Mapping) or hasattr(b, "model_dump")]
        if isinstance(data, list)
        else []
    )


SERVICE_COLUMNS = ("Port", "Product", "Seen", "Changes")


def scan_changes(banners: list[dict]) -> list[str]:
    """For banners newest first (as a host record lists them), what changed in each since the
    scan of the same port before it, in words ("" for the first scan of a port)."""
    previous: dict[str, dict] = {}
    out = [""] * len(banners)
    for i in reversed(range(len(banners))):  # oldest first
        key = service_key(banners[i])
        if key in previous:
            out[i] = text_of("; ".join(changes(previous[key], banners[i])), max_chars=300)
        previous[key] = banners[i]
    return out


def service_rows(record: Any) -> list[list[str]]:
    """The services table of a host: one row of ``SERVICE_COLUMNS`` per banner of the record."""
    banners = services_of(record)
    return [
        [service_key(b), product_line(b) or module_of(b), seen(b.get("timestamp"))[:16], diff]
        for b, diff in zip(banners, scan_changes(banners), strict=True)
    ]


# -- the CLI's text ------------------------------------------------------------------------------------
def fact_lines(facts: Iterable[Fact], indent: str = "") -> list[str]:
    facts = list(facts)
    width = max((cell_len(f.label) for f in facts), default=0)
    return [f"{indent}{pad(f.label, width)}  {f.value}" for f in facts]


def vuln_lines(vulns: list[Vuln], indent: str = "") -> list[str]:
    width = max((cell_len(v.cve) for v in vulns), default=0)
    return [
        f"{indent}{pad(v.cve, width)}  {pad(v.cvss or '-', 5)}  {pad('verified' if v.verified == 'yes' else '', 8)}"
        f"  {v.summary}".rstrip()
        for v in vulns
    ]


def service_text_lines(service: ServiceText, indent: str = "  ") -> list[str]:
    lines = []
    for section in service.sections:
        if section.title:
            lines.append(f"{indent}{section.title}")
        lines += fact_lines(section.facts, indent * (2 if section.title else 1))
    if service.vulns:
        lines += [f"{indent}Vulnerabilities", *vuln_lines(service.vulns, indent * 2)]
    if service.raw:
        lines += [f"{indent}Raw banner", *(indent * 2 + line for line in service.raw.split("\n"))]
    return lines


def render_host_text(record: Any, history: bool = False, raw_chars: int = 2000) -> str:
    """``spyglass host``: the summary, then every service (every scan with ``history``) in full."""
    lines = fact_lines(host_facts(record))
    if history:
        lines.append("(every scan, newest first)")
    banners = services_of(record)
    for banner, diff in zip(banners, scan_changes(banners), strict=True):
        lines += ["", service_line(banner)]
        if diff:
            lines.append(f"  changed since the scan before: {diff}")
        lines += service_text_lines(describe_service(banner, raw_chars))
    if saw := seen_lines(record):
        lines += ["", "Seen by scans besides open services (newest first)", *saw]
    return "\n".join(lines)
