"""Ping and DNS answers from geonet locations as inert rows (the dashboard's table) and lines
(the CLI's output)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from spyglass.present.values import as_dict, get_path, number, pad, text_of

PLACE_WIDTH = 28  # cells of the location column in CLI lines


@dataclass(frozen=True)
class PingRow:
    location: str
    country: str
    min: str
    avg: str
    max: str
    loss: str
    answer: str  # the address that answered, "no reply from ...", or the error in words
    failed: bool  # the ping could not run (an error), as opposed to a measurement
    alive: bool  # a reply came
    avg_ms: float | None  # when a reply came and its time is a number: for colouring a map

    @property
    def cells(self) -> list[str]:
        """The measurement columns, after location and country."""
        return [self.min, self.avg, self.max, self.loss, self.answer]


@dataclass(frozen=True)
class DnsRow:
    location: str
    country: str
    answer: str  # "A 192.0.2.1; AAAA ...", or the status ("NXDOMAIN", "no answer")
    answered: bool

    @property
    def cells(self) -> list[str]:
        """The measurement columns of a ping row, with the answer in the last one."""
        return ["", "", "", "", self.answer]


def place(result: Any) -> tuple[str, str]:
    """City and country of the location that measured."""
    r = as_dict(result)
    return text_of(get_path(r, "from_loc.city"), max_chars=60), text_of(get_path(r, "from_loc.country"), max_chars=20)


def _ms(value: Any) -> str:
    ms = number(value)
    return f"{ms:.2f}" if ms is not None else "-"


def ping_row(result: Any) -> PingRow:
    r = as_dict(result)
    city, country = place(r)
    ip = text_of(r.get("ip"), max_chars=64) or "?"
    if r.get("error"):
        return PingRow(city, country, "-", "-", "-", "-", text_of(r["error"], max_chars=200), True, False, None)
    loss = number(r.get("packet_loss"))
    loss_text = f"{loss:.0%}" if loss is not None else "-"
    if r.get("is_alive") is not True:
        sent = number(r.get("packets_sent"))
        answer = f"no reply from {ip}" + (f" ({sent:.0f} sent)" if sent is not None else "")
        return PingRow(city, country, "-", "-", "-", loss_text, answer, False, False, None)
    return PingRow(
        city,
        country,
        _ms(r.get("min_rtt")),
        _ms(r.get("avg_rtt")),
        _ms(r.get("max_rtt")),
        loss_text,
        ip,
        False,
        True,
        number(r.get("avg_rtt")),
    )


def dns_row(result: Any) -> DnsRow:
    r = as_dict(result)
    city, country = place(r)
    answers = r.get("answers")
    answers = answers if isinstance(answers, list) else []
    records = [
        f"{text_of(a.get('type'))} {text_of(a.get('value'))}".strip() if isinstance(a, dict) else text_of(a)
        for a in answers[:50]
    ]
    records = [x for x in records if x]
    answer = "; ".join(records) or text_of(r.get("status")) or "no answer"
    return DnsRow(city, country, text_of(answer, max_chars=300), bool(records))


def missing_text(missing: Any) -> str:
    """A location that gave no result: ``URL: no result (reason)``."""
    m = as_dict(missing)
    return text_of(f"{text_of(m.get('agent'))}: no result ({text_of(m.get('reason'))})", max_chars=300)


def _where(city: str, country: str) -> str:
    return pad(", ".join(x for x in (city, country) if x), PLACE_WIDTH)


def ping_lines(results: Iterable[Any]) -> list[str]:
    lines = []
    for result in results:
        row = ping_row(result)
        where = _where(row.location, row.country)
        if not row.alive:
            lines.append(f"{where} {row.answer}")
        else:
            lines.append(f"{where} {row.answer}  min {row.min}  avg {row.avg}  max {row.max} ms  loss {row.loss}")
    return lines


def dns_lines(results: Iterable[Any]) -> list[str]:
    return [f"{_where(row.location, row.country)} {row.answer}" for row in map(dns_row, results)]


def missing_lines(results: Any) -> list[str]:
    """The locations a geo form names as missing (``results.missing``), one line each."""
    missing = getattr(results, "missing", None)
    return [missing_text(m) for m in missing] if isinstance(missing, (list, tuple)) else []
