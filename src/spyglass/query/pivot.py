"""Pivots: from a value a banner holds to the search that finds every banner holding it.

The values come from the matcher's own table (:data:`spyglass.query.match.VALUES`: filter name ->
the banner's values it is tested against), so a pivot's query finds the banner it came from by
construction, and a new filter is a new pivot without a second list to keep.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from spyglass.query.filters import FILTERS, Kind
from spyglass.query.match import VALUES
from spyglass.safetext import has_control

# The fingerprints first: the pivots an analyst reaches for, then who and what, then the rest.
FIRST = (
    "ssl.cert.fingerprint",
    "http.favicon.hash",
    "http.html_hash",
    "ssh.hassh",
    "ssh.fingerprint",
    "ssl.jarm",
    "ssl.ja3s",
    "org",
    "asn",
    "product",
    "version",
    "hostname",
    "domain",
)
# Filters that take no value of the banner's own (flags, dates, free text) or repeat another.
NOT_PIVOTS = {"all", "ssl", "title", "state", "net", "before", "after", "scan"}
MAX_VALUE = 200  # longer values (a whole title) make a query no one would type
# Values every banner of no data shares (a scanner's port with no banner): a pivot on them finds
# all those, telling nothing of this one (newcomer trial 8: `hash 0` offered on an nmap import).
SHARED_BY_ANY = {("hash", "0")}
# The tag of a scan's result at the server's own networks, which only its account's searches of
# that scan (`scan:ID`) find: a pivot from one adds that, or it found nothing (newcomer trial 5).
PRIVATE_SCAN = "private-scan"


@dataclass(frozen=True)
class Pivot:
    filter: str
    value: str  # as the banner holds it, one line
    within: str = ""  # what else the search needs to find the banner at all (``scan:ID``), if anything

    @property
    def term(self) -> str:
        """The value's term (to add to a query, or exclude from one)."""
        return term(self.filter, self.value)

    @property
    def query(self) -> str:
        """The search that finds every banner holding the value, this one among them."""
        return f"{self.term} {self.within}" if self.within else self.term


def term(name: str, value: str) -> str:
    """``name:value`` as the query language reads it back: quoted when it holds a space, a comma
    or a quote (a quote inside cannot be written, so it is dropped)."""
    value = value.replace('"', "")
    return f'{name}:"{value}"' if re.search(r'[\s,"]|^-', value) or not value else f"{name}:{value}"


def _as_value(kind: Kind, value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return None if kind is not Kind.BOOL else str(value).lower()
    if kind is Kind.INT and not isinstance(value, int):
        try:
            value = int(str(value))
        except ValueError:
            return None
    text = " ".join(str(value).split())
    # A value with a control or invisible character is one nobody could type or read back: no pivot.
    return text if text and len(text) <= MAX_VALUE and not has_control(text) else None


def pivots(banner: Any) -> list[Pivot]:
    """Every value of ``banner`` a filter can match, as a pivot, the most telling first."""
    if not isinstance(banner, dict):
        return []
    names = [*FIRST, *(n for n in VALUES if n not in FIRST)]
    within = _private_scan(banner)
    found: list[Pivot] = []
    for name in names:
        kind = FILTERS.get(name)
        if kind is None or name in NOT_PIVOTS or kind is Kind.BOOL or kind is Kind.DATE:
            continue
        try:
            values = VALUES[name](banner)
        except (TypeError, ValueError, AttributeError):  # untyped JSON: whatever the member holds
            continue
        for raw in values:
            value = _as_value(kind, raw)
            if value is not None and (name, value) not in SHARED_BY_ANY and Pivot(name, value, within) not in found:
                found.append(Pivot(name, value, within))
    return found


def _private_scan(banner: dict) -> str:
    """``scan:ID`` for a private scan's result (see PRIVATE_SCAN), else nothing."""
    try:
        if PRIVATE_SCAN in VALUES["tag"](banner):
            return next((term("scan", s) for s in VALUES["scan"](banner) if s), "")
    except (TypeError, ValueError, AttributeError):
        pass
    return ""
