"""The query AST as a ClickHouse condition: the second compiler beside the tantivy one
(:mod:`spyglass.server.index.compiler`), from the same parsed :class:`~spyglass.query.Query`.

Every value the user typed reaches the server as a query parameter (``%(p0)s``, escaped by the
driver), never as SQL text of ours: the condition is built only from column names this module
knows and parameter placeholders.

The columns are the fields of a banner's document (banners/fields.py) by the same names, so both
stores read a banner the same way: ``t_`` text matched by words, ``x_`` lower-cased exact values, ``f_`` values
as shown, ``i_`` integers and ``b_`` booleans (arrays of zero or more values, or one value where a
banner never has more: SCALAR), ``text`` for free text. Words are query/words.py's, matched
whole, case-insensitive, a phrase's words one after another (a regular expression over the
text, stored lower-cased), asked only of the rows that hold each word's bytes (Condition).

On a server with text indexes (ClickHouse 26.2 and later: ``tokens``), a word is looked for as a
token of the text's WORDS (tables.py indexes that expression) instead, which the server answers
from the index before it reads a row; the expression splits where the regular expression does (a
curly quote or a no-break space too), so the index never drops a match. 18.16 has neither the
index nor ``hasToken``.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple

from spyglass.netblocks import Address
from spyglass.query import FILTERS, SEEN_FILTERS, Filter, Kind, Query, Text
from spyglass.query.words import SEPARATOR, words
from spyglass.server.banners.fields import ALL_TEXT_FIELDS, FACET_FIELDS, FILTER_FIELDS, I64
from spyglass.server.banners.terms import ip_ranges, tool_tags

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The free text's words with a space between each two, as a text index's ASCII tokenizer splits
# them (it would keep "a\u2014b" one token); the index and the condition name it alike.
WORDS = f"replaceRegexpAll(text, '{SEPARATOR}', ' ')".replace("\\", "\\\\")
TEXT_INDEX = f"INDEX words {WORDS} TYPE text(tokenizer = 'splitByNonAlpha')"
TEXT_INDEX_SINCE = (26, 2)  # text indexes are generally available from this version


# x_ fields that are their f_ field lower-cased (banners/fields.py ``split_exact``): not stored, their f_
# column lower-cased where a filter reads it (18 columns fewer to write and keep)
LOWERED = {
    name: "f_" + name[2:]
    for name in FILTER_FIELDS.values()
    if name.startswith("x_") and "f_" + name[2:] in FACET_FIELDS.values() and name != "x_domain"  # domain: suffixes
}


# Fields that a banner's document holds one value of, or none (fields.document sets them so,
# whatever the banner's members hold): a plain column each (String, or UInt8 for the flags every
# banner has), the empty string for none, which 18.16 reads and counts several times faster than
# an array (trends by a facet, measured by hand).
SCALAR = frozenset(
    "f_asn f_city f_country f_http_title f_ip f_isp f_org f_os f_product f_ssl_cert_issuer_cn "
    "f_ssl_cert_subject_cn x_scan b_has_ipv6 b_has_screenshot b_has_ssl b_has_vuln".split()
)


def scalar(field_name: str) -> bool:
    """Whether a field's column holds one value (SCALAR; an x_ field read from its f_ column too)."""
    return LOWERED.get(field_name, field_name) in SCALAR


def column(field_name: str) -> str:
    """The column (or expression) of an index field (the port and the time are plain columns)."""
    if field_name in LOWERED:
        shown = LOWERED[field_name]
        return f"lowerUTF8({shown})" if shown in SCALAR else f"arrayMap(lv -> lowerUTF8(lv), {shown})"
    return {"i_port": "port", "timestamp": "t"}.get(field_name, field_name)


def micros(d: date) -> int:
    """Microseconds since 1970 of the start of day ``d`` (UTC), any year."""
    return (datetime(d.year, d.month, d.day, tzinfo=UTC) - EPOCH) // timedelta(microseconds=1)


def ip16(address: Address) -> bytes:
    """An address as the ``ip`` column holds it: 16 bytes, IPv4 mapped into IPv6 (as the index does)."""
    if isinstance(address, ipaddress.IPv4Address):
        return b"\x00" * 10 + b"\xff\xff" + address.packed
    return address.packed


def word_pattern(tokens: list[str]) -> str:
    """A regular expression matching these words (``words`` of a text) as whole words, one after
    another."""
    body = f"{SEPARATOR}+".join(re.escape(t) for t in tokens)
    return f"(?:^|{SEPARATOR}){body}(?:$|{SEPARATOR})"


@dataclass
class Sql:
    """A condition's text and its parameters."""

    params: dict[str, object] = field(default_factory=dict)

    def param(self, value: object) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return f"%({name})s"


def _any(parts: list[str]) -> str:
    if not parts:
        return "0"
    return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"


def _needs(sql: Sql, col: str, found: list[str], tokens: bool) -> list[str]:
    """What a text column must hold for these words to match, found far faster than the regular
    expression: each word as a token of the indexed WORDS (``tokens``: free text on a server with
    text indexes, which answers from the index) or else as bytes anywhere in the column."""
    if tokens and col == "text":
        # a word with a character the separator class splits on (a combining mark) is left to match
        indexed = [w for w in dict.fromkeys(found) if all(unicodedata.category(c)[0] in "LN" for c in w)]
        return [f"hasToken({WORDS}, {sql.param(w)})" for w in indexed]
    return [f"position({col}, {sql.param(w)}) > 0" for w in dict.fromkeys(found)]


def _matched(sql: Sql, col: str, found: list[str]) -> str:
    # text columns are stored lower-cased (tables.py: as Python lower-cases, as the words are):
    # no (?i), with which 18.16 would look for the pattern's literal part case-sensitively
    return f"match({col}, {sql.param(word_pattern(found))})"


def _text(sql: Sql, col: str, value: str, tokens: bool = False) -> str:
    found = words(value)
    if not found:
        return "0"  # no words match nothing, as in the embedded store
    needs = _needs(sql, col, found, tokens) if tokens and col == "text" else []  # the index's, in a negated term
    return " AND ".join([*needs, _matched(sql, col, found)])


def _one_of(sql: Sql, field_name: str, values: list) -> str:
    """That a field holds one of ``values`` (its column holds one value, or several)."""
    if not values:
        return "0"
    col = column(field_name)
    if scalar(field_name) or col == "port":
        return f"{col} IN {sql.param(tuple(values))}"
    return f"hasAny({col}, {sql.param(values)})"


def filter_condition(sql: Sql, f: Filter, current: bool = False) -> str:
    """``current``: of the current banners, where a tool's tag (TOOL_TAGS) matches those of every
    service any banner of which holds it (one the tool found, that another has scanned since)."""
    if f.name in SEEN_FILTERS:  # what a scan saw besides open services: no banner (banners/seen.py)
        return "0"
    kind = FILTERS[f.name]
    field_name = FILTER_FIELDS[f.name]
    col = column(field_name)
    if f.name == "tag" and current and (tools := tool_tags(f.values)):
        found = f"service GLOBAL IN (SELECT service FROM banners WHERE {_one_of(sql, field_name, tools)})"
        return _any([filter_condition(sql, f), found])
    if f.name == "all":
        return _any([_text(sql, column(c), str(v)) for v in f.values for c in ALL_TEXT_FIELDS])
    if kind is Kind.TEXT:
        return _any([_text(sql, col, str(v)) for v in f.values])
    if kind in (Kind.EXACT, Kind.SUFFIX, Kind.PREFIX):
        return _one_of(sql, field_name, [str(v).lower() for v in f.values])
    if kind in (Kind.COUNTRY, Kind.ASN):
        return _one_of(sql, field_name, [str(v).upper() for v in f.values])
    if kind is Kind.INT:
        return _one_of(sql, field_name, [int(v) for v in f.values if isinstance(v, int) and I64[0] <= v <= I64[1]])
    if kind is Kind.BOOL:
        return _one_of(sql, field_name, [int(bool(v)) for v in f.values])
    if kind is Kind.DATE:
        dates = [v for v in f.values if isinstance(v, date)]
        if f.name == "before":
            return f"t < {sql.param(micros(min(dates)))}"
        return f"t >= {sql.param(micros(max(dates) + timedelta(days=1)))}"
    if kind is Kind.CIDR:
        ranges = []
        for net in f.values:
            assert isinstance(net, (ipaddress.IPv4Network, ipaddress.IPv6Network))
            for low, high in ip_ranges(net):
                low_hex, high_hex = ip16(low).hex(), ip16(high).hex()
                ranges.append(f"(ip >= unhex({sql.param(low_hex)}) AND ip <= unhex({sql.param(high_hex)}))")
        return _any(ranges)
    raise ValueError(f"no column for filter {f.name}")


def current(demoted: str) -> str:
    """The condition that a banner is the latest of its service: its key is not in the Set table
    ``demoted`` (``DATABASE.demoted``: named in full, as a shard reads it)."""
    # bitXor(key, 0) rather than key: 18.16's primary key analysis (key is in the sort key) would
    # try to read the Set as a table, which it cannot
    return f"bitXor(key, 0) NOT IN {demoted}"


class Condition(NamedTuple):
    """A query's condition in two parts that hold together: ``cheap``, and ``costly`` (the terms
    that match regular expressions). The store reads the first in PREWHERE and the second in
    WHERE, so that 18.16 (which evaluates every part of a condition for every row) runs the
    expressions only on the rows the rest let through: ``cheap`` also holds what each word of a
    text term must be for it to match (:func:`_needs`: a count of a common word is faster so,
    measured by hand)."""

    cheap: str
    costly: str


def _worded(term: Text | Filter) -> tuple[str, str] | None:
    """(column, text) of a positive term that matches words in one column: free text, or a text
    filter of one value."""
    if term.negated:
        return None
    if isinstance(term, Text):
        return "text", term.text
    if term.name not in SEEN_FILTERS and FILTERS[term.name] is Kind.TEXT and len(term.values) == 1:
        return column(FILTER_FIELDS[term.name]), str(term.values[0])
    return None


def where(sql: Sql, query: Query, tokens: bool = False, current: bool = False) -> Condition:
    """The condition matching what ``query`` means (it must have parsed without errors);
    ``tokens``: the server has text indexes (free text then uses the one on WORDS); ``current``:
    of the current banners (see :func:`filter_condition`)."""
    cheap, costly = [], []
    for term in query.terms:
        worded = _worded(term)
        found = words(worded[1]) if worded else []
        if worded and found:
            cheap += _needs(sql, worded[0], found, tokens)
            costly.append(_matched(sql, worded[0], found))
            continue
        if isinstance(term, Text):
            condition = _text(sql, "text", term.text, tokens)
        else:
            condition = filter_condition(sql, term, current)
        condition = f"NOT ({condition})" if term.negated else condition
        (costly if "match(" in condition else cheap).append(condition)
    return Condition(" AND ".join(cheap) or "1", " AND ".join(costly) or "1")
