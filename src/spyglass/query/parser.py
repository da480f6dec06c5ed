"""The one parser of the search syntax, used by the backend, the TUI and ``/search/tokens``.

    apache country:DE,FR -port:22 "default page" net:198.18.0.0/24 after:2025-01-01

Words and quoted phrases are free text; ``name:value`` filters must be known names (an unknown
one is an error, never dropped); comma-separated values are alternatives; ``-`` negates.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import date, datetime

from spyglass.query.ast import Facet, Filter, Query, QueryError, Span, Text, Value
from spyglass.query.filters import (
    DEFAULT_FACET_SIZE,
    FACETS,
    FILTERS,
    MAX_FACET_SIZE,
    MAX_FILTER_VALUES,
    MAX_PREFIX_CHARS,
    MAX_QUERY_READ,
    MAX_QUERY_VALUES,
    MAX_VALUE_CHARS,
    Kind,
)

_NAME = re.compile(r"-?([A-Za-z_][A-Za-z0-9_.]*):")
_INT = re.compile(r"-?[0-9]+")  # ASCII digits only, everywhere in the language
I64 = (-(2**63), 2**63 - 1)  # what the index holds
INT_RANGES = {"port": (0, 65535), "os.accuracy": (0, 100)}  # narrower ranges of some INT filters
# Dates the index can hold (nanoseconds in an i64), with a day to spare either side.
FIRST_DATE, LAST_DATE = date(1678, 1, 1), date(2261, 12, 31)
_TRUE, _FALSE = {"true", "yes", "1", "on"}, {"false", "no", "0", "off"}


MAX_ERRORS = 10  # problems said of one query: past them the rest of it is not read


class QuerySyntaxError(ValueError):
    """A query that cannot be run; ``errors`` lists every problem with its position."""

    def __init__(self, errors: list[QueryError]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors


def parse(source: str) -> Query:
    """Parse ``source``; problems are collected in ``Query.errors`` rather than raised."""
    query = Query(source)
    if not source.strip():
        query.errors.append(QueryError("empty query", Span(0, len(source))))
        return query
    pos, n, read = 0, len(source), 0
    while pos < n:
        if source[pos].isspace():
            pos += 1
            continue
        if len(query.errors) >= MAX_ERRORS:  # (a query of 10,000 stray quotes was a 286 KB answer)
            query.errors.append(QueryError("more problems after these: the rest is not read", Span(pos, n)))
            return query
        if read >= MAX_QUERY_READ:
            query.errors.append(QueryError(_NOT_READ, Span(pos, n)))
            return query
        start = pos
        read += 1
        negated = source[pos] == "-" and pos + 1 < n and not source[pos + 1].isspace()
        match = _NAME.match(source, pos)
        if match:
            pos, values = _parse_filter(source, match, negated, query, MAX_QUERY_READ - read + 1)
            read += values - 1
            continue
        body = pos + 1 if negated else pos
        if body < n and source[body] == '"':
            end = source.find('"', body + 1)
            if end < 0:
                query.errors.append(QueryError("unbalanced quote", Span(body, n)))
                return query
            phrase = source[body + 1 : end]
            if len(phrase) > MAX_VALUE_CHARS:
                query.errors.append(QueryError(_too_long("a phrase", phrase), Span(start, end + 1)))
            elif phrase.strip():
                query.terms.append(
                    Text(phrase, phrase=" " in phrase.strip(), negated=negated, span=Span(start, end + 1))
                )
            pos = end + 1
            continue
        end = pos
        while end < n and not source[end].isspace():
            end += 1
        word = source[body:end]
        if '"' in word:
            query.errors.append(QueryError("unbalanced quote", Span(start, end)))
        elif mistaken := _not_syntax(word, negated):
            query.errors.append(QueryError(mistaken, Span(start, end)))
        elif len(word) > MAX_VALUE_CHARS:
            query.errors.append(QueryError(_too_long("a word", word), Span(start, end)))
        elif word:
            query.terms.append(Text(word, negated=negated, span=Span(start, end)))
        pos = end
    if not query.terms and not query.errors:
        query.errors.append(QueryError("empty query", Span(0, n)))
    _check_size(query)
    return query


# Words of other search languages that this one reads as plain text, so that a query written with them
# would find only banners that hold the word: an error says what to write instead (the first line the
# search box shows of it is about 55 characters). Quoted, they are text.
_EITHER = "is not an operator; alternatives: port:22,80"
_OPERATORS = {
    "OR": f"OR {_EITHER}",
    "||": f"|| {_EITHER}",
    "AND": "AND is not needed: every term must match",
    "&&": "&& is not needed: every term must match",
    "NOT": "NOT is not an operator: exclude with -term",
}


def _not_syntax(word: str, negated: bool) -> str | None:
    """What is wrong with a bare word that is another language's syntax (OR, a parenthesis), or None."""
    if not negated and word in _OPERATORS:
        return _OPERATORS[word]
    if word.count("(") != word.count(")"):
        return "unbalanced parenthesis: terms are not grouped"
    if word.startswith("(") and _NAME.match(word.lstrip("(")):
        return "parentheses do not group: every term must match"
    if not any(c.isalnum() for c in word):  # the index holds words of letters and digits only
        if word.startswith("-"):
            return "- needs its term right after it: -nginx excludes nginx"
        return f"{word} has no letter or digit: it would match nothing"
    return None


_NOT_READ = f"over {MAX_QUERY_READ:,} words and filter values: the rest is not read (at most {MAX_QUERY_VALUES})"


def _too_long(what: str, text: str) -> str:
    return f"{what} of {len(text):,} characters; at most {MAX_VALUE_CHARS}"


def _check_size(query: Query) -> None:
    """The caps on a whole query (filters.py says why): an error naming each one passed."""
    everything = Span(0, len(query.source))
    values = len(query.texts) + sum(len(f.values) for f in query.filters)
    if values > MAX_QUERY_VALUES:
        message = f"{values:,} words and filter values; at most {MAX_QUERY_VALUES} in one query"
        query.errors.append(QueryError(message, everything))
    prefixes = [f for f in query.filters if FILTERS[f.name] is Kind.PREFIX]
    chars = sum(len(str(v)) for f in prefixes for v in f.values)
    if chars > MAX_PREFIX_CHARS:
        message = f"values of {chars:,} characters in all; at most {MAX_PREFIX_CHARS:,} in one query"
        query.errors.append(QueryError(f"{prefixes[0].name}: {message}", everything))


def parse_strict(source: str) -> Query:
    query = parse(source)
    if query.errors:
        raise QuerySyntaxError(query.errors)
    return query


def _parse_filter(source: str, match: re.Match, negated: bool, query: Query, most: int) -> tuple[int, int]:
    """The filter at ``match`` read into ``query``: where it ends, and how many values it has (past
    ``most`` of them, the rest of the query is not read)."""
    name = match.group(1).lower()
    start, pos, n = match.start(), match.end(), len(source)
    raw_values: list[tuple[str, int]] = []
    while True:
        if len(raw_values) >= most:
            query.errors.append(QueryError(_NOT_READ, Span(pos, n)))
            return n, len(raw_values)
        if pos < n and source[pos] == '"':
            end = source.find('"', pos + 1)
            if end < 0:
                query.errors.append(QueryError("unbalanced quote", Span(pos, n)))
                return n, len(raw_values)
            raw_values.append((source[pos + 1 : end], pos))
            pos = end + 1
            if pos < n and not source[pos].isspace() and source[pos] != ",":
                glued = pos
                while pos < n and not source[pos].isspace():
                    pos += 1
                query.errors.append(
                    QueryError(f"{name}: unexpected '{source[glued:pos]}' after a quoted value", Span(glued, pos))
                )
                return pos, len(raw_values)
        else:
            end = pos
            while end < n and not source[end].isspace() and source[end] != ",":
                end += 1
            raw_values.append((source[pos:end], pos))
            pos = end
        if pos < n and source[pos] == ",":
            pos += 1
            continue
        break
    span = Span(start, pos)
    kind = FILTERS.get(name)
    if kind is None:
        query.errors.append(QueryError(f"unknown filter '{name}'", span))
        return pos, len(raw_values)
    values: list[Value] = []
    for raw, at in raw_values:
        if not raw.strip():
            query.errors.append(QueryError(f"{name}: missing value", Span(at, at + 1)))
            continue
        if len(raw) > MAX_VALUE_CHARS:
            query.errors.append(QueryError(f"{name}: {_too_long('a value', raw)}", Span(at, at + len(raw))))
            continue
        if source[at] != '"' and raw.count("(") != raw.count(")"):
            query.errors.append(QueryError(f"{name}: unbalanced parenthesis in '{raw}'", Span(at, at + len(raw))))
            continue
        try:
            values.append(convert(kind, raw.strip(), name))
        except ValueError as exc:
            query.errors.append(QueryError(f"{name}: {exc}", Span(at, at + len(raw))))
    if values and len(values) == len(raw_values):
        distinct = _distinct(kind, values)
        if len(distinct) > MAX_FILTER_VALUES:
            message = f"{name}: {len(distinct):,} values; at most {MAX_FILTER_VALUES} in one filter"
            query.errors.append(QueryError(message, span))
        else:
            query.terms.append(Filter(name, distinct, negated, span))
    return pos, len(raw_values)


def _distinct(kind: Kind, values: list[Value]) -> tuple[Value, ...]:
    """The values without repeats, networks merged where they overlap or touch: 1,000 copies of
    one network are one range to look up."""
    if kind is Kind.CIDR:
        v4 = [v for v in values if isinstance(v, ipaddress.IPv4Network)]
        v6 = [v for v in values if isinstance(v, ipaddress.IPv6Network)]
        return (*ipaddress.collapse_addresses(v4), *ipaddress.collapse_addresses(v6))
    return tuple(dict.fromkeys(values))


def convert(kind: Kind, raw: str, name: str = "") -> Value:
    """A filter value in its typed form; ValueError says what was expected."""
    if kind is Kind.INT:
        if not _INT.fullmatch(raw):
            raise ValueError(f"'{raw}' is not a whole number")
        low, high = INT_RANGES.get(name, I64)
        if not low <= int(raw) <= high:
            raise ValueError(f"'{raw}' is out of range ({low} to {high})")
        return int(raw)
    if kind is Kind.BOOL:
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise ValueError(f"'{raw}' is not true or false")
    if kind is Kind.DATE:
        return parse_date(raw)
    if kind is Kind.CIDR:
        try:
            if not raw.isascii():
                raise ValueError
            return ipaddress.ip_network(raw, strict=False)
        except ValueError:
            raise ValueError(f"'{raw}' is not an IP address or CIDR network") from None
    if kind is Kind.COUNTRY:
        if len(raw) != 2 or not raw.isascii() or not raw.isalpha():
            raise ValueError(f"'{raw}' is not a 2-letter country code")
        return raw.upper()
    if kind is Kind.ASN:
        digits = raw[2:] if raw.upper().startswith("AS") else raw
        if not _INT.fullmatch(digits) or digits.startswith("-") or int(digits) >= 2**32:
            raise ValueError(f"'{raw}' is not an AS number")
        return f"AS{int(digits)}"
    return raw.lower()


def parse_date(raw: str) -> date:
    for fmt in ("%Y-%m-%d", "%d/%m/%Y", "%Y-%m", "%Y"):
        try:
            day = datetime.strptime(raw, fmt).date() if raw.isascii() else None
        except ValueError:
            continue
        if day is None:
            break
        if not FIRST_DATE <= day <= LAST_DATE:
            raise ValueError(f"'{raw}' is out of range ({FIRST_DATE} to {LAST_DATE})")
        return day
    raise ValueError(f"'{raw}' is not a date (YYYY-MM-DD)")


def parse_facets(spec: str | None) -> list[Facet]:
    """``port,org:20`` as facets; ValueError names the first bad one, or one named twice (each
    facet is counted anew, and the answer holds one list a name: ``ip:1000`` twenty times was
    twenty passes over every match for one list)."""
    facets: list[Facet] = []
    for item in (spec or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, _, size = item.partition(":")
        name = name.strip().lower()
        if name not in FACETS:
            raise ValueError(f"unknown facet '{name}'")
        if any(f.name == name for f in facets):
            raise ValueError(f"facet '{name}' is named twice")
        if size:
            if not _INT.fullmatch(size.strip()) or not 1 <= int(size) <= MAX_FACET_SIZE:
                # (`org:abc` reads as a filter to whoever writes it: say what the colon takes)
                shown = size.strip()[:20]
                most = MAX_FACET_SIZE
                raise ValueError(f"facet {name}: after the colon comes how many values, 1 to {most}, not '{shown}'")
            facets.append(Facet(name, int(size)))
        else:
            facets.append(Facet(name, DEFAULT_FACET_SIZE))
    return facets


def tokens(source: str) -> dict:
    """What ``/intel/host/search/tokens`` answers: the parser's reading of ``source``."""
    query = parse(source)
    attributes: dict[str, list] = {}
    for f in query.filters:
        key = "ports" if f.name == "port" else f.name
        attributes.setdefault(key, []).extend(_jsonable(v) for v in f.values)
    return {
        "attributes": attributes,
        "errors": [str(e) for e in query.errors],
        "string": " ".join(("-" if t.negated else "") + (f'"{t.text}"' if t.phrase else t.text) for t in query.texts),
        "filters": sorted({f.name for f in query.filters}),
    }


def _jsonable(value: Value):
    return value if isinstance(value, (str, int, bool)) else str(value)
