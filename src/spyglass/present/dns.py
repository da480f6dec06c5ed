"""DNS answers (domain records, resolve, reverse) as inert rows: the CLI's lines and the
dashboard's tables. Names and values come from banners and DNS servers: cleaned here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spyglass.present.values import pad, plural, text_of


def record_rows(info: Any) -> list[tuple[str, str, str, str]]:
    """(hostname, type, value, last seen date) of each record of a domain."""
    domain = text_of(info.domain, max_chars=253)
    rows = []
    for record in info.data:
        sub = text_of(record.subdomain, max_chars=253)
        rows.append(
            (
                f"{sub}.{domain}" if sub else domain,
                text_of(record.type, max_chars=10),
                text_of(record.value, max_chars=300),
                text_of(record.last_seen, max_chars=40)[:19].replace("T", " "),
            )
        )
    return rows


def domain_summary(info: Any) -> str:
    subs = len(info.subdomains)
    tags = ", ".join(text_of(t, max_chars=40) for t in info.tags)
    more = "; more on the next page" if info.more else ""
    counts = f"{plural(len(info.data), 'record')}, {plural(subs, 'subdomain')}"
    return counts + (f", tags: {tags}" if tags else "") + more


def domain_lines(info: Any) -> list[str]:
    """Name, type, last seen, value: the value last, as the one column of any width (a TXT
    record), so that every other column lines up."""
    rows = record_rows(info)
    width = max((len(name) for name, *_ in rows), default=0)
    return [f"{pad(name, width)}  {kind:<5}  {seen:<19}  {value}" for name, kind, value, seen in rows]


def answer_rows(answers: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """Each asked name (or address) with its answers, [] when there was none."""
    out = []
    for asked, found in answers.items():
        values = found if isinstance(found, list) else [] if found is None else [found]
        out.append((text_of(asked, max_chars=253), [text_of(v, max_chars=253) for v in values]))
    return out


def answer_lines(answers: Mapping[str, Any]) -> list[str]:
    rows = answer_rows(answers)
    width = max((len(asked) for asked, _ in rows), default=0)
    return [f"{pad(asked, width)}  {', '.join(found) or '(none)'}" for asked, found in rows]
