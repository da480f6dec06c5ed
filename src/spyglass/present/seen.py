"""What scans saw of a host besides its open services (a host record's ``seen``: the host up, its
ports closed or filtered with nmap's reasons, and the ports nmap only counted) as inert text, for
``spyglass host``, the dashboard's Host pane and a search of ``host.state:`` or ``port.state:``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spyglass.present.service import Fact, seen
from spyglass.present.values import as_dict, pad, plural, text_of

SHOWN_PORTS = 200  # ports not open listed of one run (the rest counted)


def runs(record: Any) -> list[tuple[dict, list[dict]]]:
    """Each run's host row and its ports' rows, newest run first (as the record lists them)."""
    rows = as_dict(record).get("seen")
    out: dict[str, tuple[dict, list[dict]]] = {}
    for row in rows if isinstance(rows, list) else []:
        row = as_dict(row)
        what = as_dict(row.get("seen"))
        scan = text_of(what.get("scan"))
        host, ports = out.setdefault(scan, ({}, []))
        if what.get("kind") == "host":
            host.update(row)
        else:
            ports.append(row)
    return list(out.values())


def _what(row: Mapping) -> dict:
    return as_dict(row.get("seen"))


def _reason(what: Mapping) -> str:
    ttl = what.get("ttl")
    reason = text_of(what.get("reason"), max_chars=64)
    return ", ".join(t for t in (reason, f"ttl {ttl}" if isinstance(ttl, int) else "") if t)


def _open_ports(what: Mapping) -> str:
    """``no open port``, ``3 open ports``; "" where the count is missing or no whole number (a
    server's row may hold any JSON there)."""
    opened = what.get("open")
    if not isinstance(opened, int) or isinstance(opened, bool):
        return ""
    return "no open port" if opened == 0 else plural(opened, "open port")


def run_line(host: Mapping) -> str:
    """``up (user-set), no open port: nmap 7.93 at 2026-11-29 12:50:41, sweep.xml``."""
    what = _what(host)
    ports = _open_ports(what)
    status = text_of(what.get("state"), max_chars=64) or "?"
    reason = _reason(what)
    tool = " ".join(
        t for t in (text_of(what.get("tool"), max_chars=40), text_of(what.get("version"), max_chars=40)) if t
    )
    by = f"seen by {tool or 'a scan'} at {seen(host.get('timestamp'))}"
    file = text_of(what.get("file"), max_chars=200)
    head = f"{status} ({reason})" if reason else status
    return ", ".join(t for t in (head, ports) if t) + f": {by}" + (f", {file}" if file else "")


def port_line(row: Mapping) -> str:
    """``59075/tcp  filtered  no-response, ttl 0``."""
    what = _what(row)
    where = f"{text_of(row.get('port'))}/{text_of(row.get('transport'), max_chars=16) or 'tcp'}"
    return f"{pad(where, 11)} {pad(text_of(what.get('state'), max_chars=64), 9)} {_reason(what)}".rstrip()


def extra_lines(host: Mapping) -> list[str]:
    """nmap's counts of ports it did not list: ``40 closed (conn-refused 40: 100-139)``."""
    out = []
    extras = _what(host).get("extraports")
    for extra in extras if isinstance(extras, list) else []:
        extra = as_dict(extra)
        reasons = extra.get("reasons")
        reasons = reasons if isinstance(reasons, list) else []
        said = []
        for r in map(as_dict, reasons):
            ranges = text_of(r.get("ports"), max_chars=80)
            said.append(" ".join(t for t in (text_of(r.get("reason"), max_chars=64), text_of(r.get("count"))) if t))
            said[-1] += f": {ranges}" if ranges else ""
        count = text_of(extra.get("count")) or "?"
        out.append(f"{count} {text_of(extra.get('state'), max_chars=64)}" + (f" ({'; '.join(said)})" if said else ""))
    return out


def seen_facts(record: Any) -> list[Fact]:
    """The summary's rows: the newest run's word on the host, and what it saw not open."""
    found = runs(record)
    if not found:
        return []
    host, ports = found[0]
    facts = [Fact("scanned", run_line(host) if host else "-")]
    closed = [port_line(p).split()[0] + " " + text_of(_what(p).get("state"), max_chars=64) for p in ports[:8]]
    more = len(ports) - len(closed)
    extras = extra_lines(host) if host else []
    shown = ", ".join(closed) + (f" and {more:,} more" if more > 0 else "")
    if shown or extras:
        facts.append(
            Fact("not open", "; ".join(t for t in (shown, "not listed: " + ", ".join(extras) if extras else "") if t))
        )
    return facts


def seen_lines(record: Any, indent: str = "  ") -> list[str]:
    """Every run's word on the host, newest first: its status, its ports not open, nmap's counts."""
    lines: list[str] = []
    for host, ports in runs(record):
        lines.append(indent + (run_line(host) if host else "a run's ports (its host row is missing)"))
        if ports:
            lines.append(f"{indent * 2}not open")
            lines += [indent * 3 + port_line(p) for p in ports[:SHOWN_PORTS]]
            if len(ports) > SHOWN_PORTS:
                lines.append(f"{indent * 3}… and {len(ports) - SHOWN_PORTS:,} more")
        extras = extra_lines(host) if host else []
        if extras:
            lines.append(f"{indent * 2}not listed (nmap counted them): " + "; ".join(extras))
    return lines


def result_text(banner: Any) -> tuple[str, str, str] | None:
    """A search result that is a row of what a scan saw: (port column, state, what else), or None
    for a banner."""
    b = as_dict(banner)
    what = as_dict(b.get("seen"))
    if not what:
        return None
    kind = what.get("kind")
    where = "host" if kind == "host" else "not listed" if kind == "extraports" else port_line(b).split()[0]
    state = text_of(what.get("state"), max_chars=64)
    if kind == "host" and (ports := _open_ports(what)):
        state += f" ({ports})"
    if kind == "extraports":
        state = f"{text_of(what.get('count'))} {state}"
    file = text_of(what.get("file"), max_chars=120)
    tool = text_of(what.get("tool"), max_chars=40)
    return where, state, ", ".join(t for t in (_reason(what), tool, file) if t)
