"""Search results and facet counts as inert cells and lines, for the search pane and
``spyglass search`` / ``spyglass count``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spyglass.present.seen import result_text
from spyglass.present.service import PRODUCT_WIDTH, headline, product_line, seen, service_key, service_line
from spyglass.present.values import as_dict, get_path, number, pad, plural, text_of
from spyglass.safetext import clean, fit

RESULT_COLUMNS = ("IP", "Port", "Org", "Country", "Product", "Title / banner", "Seen")
CELL_WIDTH = 60  # cells; the table shrinks columns further


def address(banner: Mapping) -> str:
    return text_of(banner.get("ip_str") or banner.get("ipv6") or banner.get("ip"), max_chars=64)


def result_cells(banner: Any) -> list[str]:
    """One search result as the cells of ``RESULT_COLUMNS``, each at most ``CELL_WIDTH`` terminal cells."""
    b = as_dict(banner)
    if saw := result_text(b):  # a row of what a scan saw (host.state:, port.state:), not a banner
        where, state, more = saw
        return [fit(c, CELL_WIDTH) for c in (address(b), where, "", "", state, more, seen(b.get("timestamp"))[:10])]
    cells = [
        address(b),
        service_key(b),
        text_of(b.get("org")),
        text_of(get_path(b, "location.country_code")),
        product_line(b),
        headline(b),
        seen(b.get("timestamp"))[:10],
    ]
    return [fit(c, CELL_WIDTH) for c in cells]


def result_line(banner: Any, product_width: int = PRODUCT_WIDTH) -> str:
    """One search result as a CLI line: the address, then the service line."""
    b = as_dict(banner)
    if saw := result_text(b):  # a row of what a scan saw (host.state:, port.state:), not a banner
        where, state, more = saw
        line = f"{pad(where, 9)} {pad(state, product_width)} {more}  {seen(b.get('timestamp'))[:19]}"
        return f"{pad(address(b), 16)} {clean(line, one_line=True, max_chars=150)}"
    return f"{pad(address(b), 16)} {service_line(b, product_width)}"


@dataclass(frozen=True)
class FacetRow:
    value: str  # the value as the service sent it, for refining a query (not for the screen)
    label: str  # the value as inert text
    count: int
    share: float  # count / the facet's top count, 0..1, for a bar


def facet_groups(facets: Any) -> list[tuple[str, list[FacetRow]]]:
    """Each facet's name (inert) and its values, in the order the service sent them."""
    groups = []
    for name, values in facets.items() if isinstance(facets, Mapping) else []:
        entries = [as_dict(v) for v in values[:1000]] if isinstance(values, list) else []
        counts = [int(number(e.get("count")) or 0) for e in entries]
        top = max(counts, default=0) or 1
        raw = ["" if e.get("value") is None else str(e.get("value")) for e in entries]
        rows = [
            FacetRow(value, clean(value, one_line=True, max_chars=200), count, count / top)
            for value, count in zip(raw, counts, strict=True)
        ]
        groups.append((clean(name, one_line=True, max_chars=40), rows))
    return groups


def facet_lines(facets: Any, label_width: int = 40, bar_width: int = 24) -> list[str]:
    """The facet summary of ``spyglass search`` and ``spyglass count``: a heading, then one bar a value."""
    lines = []
    for name, rows in facet_groups(facets):
        lines += ["", name]
        for row in rows:
            bar = "#" * max(1, round(bar_width * row.share))
            lines.append(f"  {pad(fit(row.label, label_width), label_width)} {row.count:>10,}  {bar}")
    return lines


def paging_line(total: int, shown: int, count_only: bool, truncated: int | None, more: bool, arrived: int) -> str:
    """The search pane's status once a page is shown: how many there are, how many are shown, what
    loads past the last row, and how many arrived since the first page (``arrived`` while pages
    remain: what the service counts more than at the first page). ``truncated``: the rows the
    table stopped at, if it did."""
    found = plural(total, "result")
    if count_only:
        return f"{found} (count only)"
    if shown >= total:
        text = f"{found}, all shown"
    elif truncated:
        text = f"{found}; the first {truncated:,} are shown — refine, or export (e) for all"
    elif not more:
        # every page read: the services not shown arrived, or were collected again, since the
        # first page (they moved above it; trial 26: "past the last row loads 100 more" then)
        arrived = max(0, total - shown)
        text = f"{found}, {shown:,} shown"
    else:
        # arrivals push the rows down: a page repeats rows shown, left out (stablepages.py)
        loads = "more (1 query credit a page)" if arrived else "100 more (1 query credit)"
        text = f"{found}, {shown:,} shown — past the last row loads {loads}"
    return f"{text}; {arrived:,} more since the first page (r shows them)" if arrived else text
