"""How the CLI prints results: every table and summary in one place, every untrusted value through
:mod:`spyglass.safetext`. (Ping and DNS tables and the host summary are to be shared with the
dashboard; they live here, together, until then.)"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from spyglass.safetext import clean

# JSON escapes C0 controls itself; DEL, C1 controls (0x9b is an 8-bit CSI) and bidi overrides
# are escaped here too, so untrusted text stays inert in a terminal and the JSON stays exact.
_UNSAFE_IN_JSON = re.compile("[\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def print_json(value: Any) -> None:
    if hasattr(value, "to_api"):
        value = value.to_api()
    text = json.dumps(value, indent=2, ensure_ascii=False)
    print(_UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def print_pairs(pairs: list[tuple[str, Any]]) -> None:
    width = max(len(k) for k, _ in pairs)
    for name, value in pairs:
        print(f"{name:<{width}}  {clean(value, one_line=True)}")


def ping_rows(results) -> None:
    for r in results:
        where = clean(f"{r.from_loc.city}, {r.from_loc.country}", one_line=True)
        if r.error:
            print(f"{where:<28} {clean(r.error, one_line=True)}")
        elif not r.is_alive:
            print(f"{where:<28} no reply from {clean(r.ip, one_line=True)} ({r.packets_sent} sent)")
        else:
            print(f"{where:<28} {clean(r.ip, one_line=True)}  min {r.min_rtt:.2f}  avg {r.avg_rtt:.2f}  "
                  f"max {r.max_rtt:.2f} ms  loss {r.packet_loss:.0%}")


def dns_rows(results) -> None:
    for r in results:
        where = clean(f"{r.from_loc.city}, {r.from_loc.country}", one_line=True)
        values = ", ".join(f"{a.type} {a.value}" for a in r.answers) or (r.status or "no answer")
        print(f"{where:<28} {clean(values, one_line=True)}")


def missing_rows(results) -> None:
    """The locations that did not answer a geo form, on stderr."""
    for m in getattr(results, "missing", []):
        print(clean(f"{m.agent}: no result ({m.reason})", one_line=True), file=sys.stderr)


def service_line(b) -> str:
    what = b.product_line or (b.module or "")
    return clean(f"{b.port}/{b.transport:<4} {what:<32} {b.headline}", one_line=True, max_chars=150)


def host_summary(host) -> None:
    where = ", ".join(x for x in (host.city, host.country_name) if x)
    print_pairs([("ip", host.ip_str), ("org", host.org or "-"), ("isp", host.isp or "-"), ("asn", host.asn or "-"),
                 ("location", where or "-"), ("hostnames", ", ".join(host.hostnames) or "-"),
                 ("tags", ", ".join(host.tags) or "-"), ("vulns", ", ".join(host.vulns) or "-"),
                 ("last update", host.last_update or "-"), ("ports", ", ".join(map(str, host.ports)))])
    for banner in host.data:
        print(f"  {clean(banner.timestamp[:19], one_line=True)}  {service_line(banner)}")


def search_rows(matches) -> None:
    for b in matches:
        print(f"{clean(b.ip_str, one_line=True):<16} {service_line(b)}")


def facet_rows(facets) -> None:
    for name, values in (facets or {}).items():
        print(f"\n{clean(name, one_line=True)}")
        top = max((v.count for v in values), default=1) or 1
        for v in values:
            bar = "#" * max(1, round(24 * v.count / top))
            print(f"  {clean(v.label, one_line=True, max_chars=40):<40} {v.count:>10,}  {bar}")
