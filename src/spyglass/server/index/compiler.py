"""The query AST as a tantivy query.

Free text (words and quoted phrases) matches the ``text`` field: the banner's raw ``data``, its
product, HTTP title, org and hostnames (see banners.fields.document). Search, count and facets see only
the current banner of each service (``b_current``), except for a scan's results (see
BannerIndex.compile); host lookups see every banner.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, time, timedelta

import tantivy
from tantivy import Occur
from tantivy import Query as TQ

from spyglass.query import FILTERS, SEEN_FILTERS, Filter, Kind, Query, Text
from spyglass.query.words import words
from spyglass.server.banners.fields import ALL_TEXT_FIELDS, FILTER_FIELDS
from spyglass.server.banners.terms import ip_ranges, tool_tags
from spyglass.server.index.schema import TRUE_ONLY, exact_terms, in_index


def _text_query(schema: tantivy.Schema, field: str, text: str) -> TQ:
    tokens = words(text)
    if not tokens:
        return TQ.empty_query()
    if len(tokens) == 1:
        return TQ.term_query(schema, field, tokens[0])
    terms: list[str | tuple[int, str]] = list(tokens)
    return TQ.phrase_query(schema, field, terms)


def _any(queries: list[TQ]) -> TQ:
    if len(queries) == 1:
        return queries[0]
    return TQ.boolean_query([(Occur.Should, q) for q in queries])


def _day(d: date) -> datetime:
    return datetime.combine(d, time.min)


# The services of which a banner no longer current holds one of these tool tags (terms.py)
ToolServices = Callable[[list[str]], list[int]]


def filter_query(schema: tantivy.Schema, f: Filter, tool_services: ToolServices | None = None) -> TQ:
    if f.name in SEEN_FILTERS:  # what a scan saw besides open services: no banner (banners/seen.py)
        return TQ.empty_query()
    kind = FILTERS[f.name]
    field = in_index(FILTER_FIELDS[f.name])
    if f.name == "tag" and tool_services is not None and (tools := tool_tags(f.values)):
        found = tool_services(tools)  # also where a later banner of another tool is the current one
        tagged = filter_query(schema, f)
        return _any([tagged, TQ.term_set_query(schema, "i_service", found)]) if found else tagged
    if f.name == "all":
        return _any([_text_query(schema, fld, str(v)) for v in f.values for fld in map(in_index, ALL_TEXT_FIELDS)])
    if kind is Kind.TEXT:
        return _any([_text_query(schema, field, str(v)) for v in f.values])
    if kind is Kind.PREFIX:  # a CPE, or a leading part of it up to a colon
        return _prefixed(schema, field, [str(v).lower() for v in f.values])
    if kind in (Kind.EXACT, Kind.SUFFIX):
        if field.startswith("e_"):
            values = [t for v in f.values for t in exact_terms(str(v))]
        else:
            values = [str(v).lower() for v in f.values]
        return TQ.term_query(schema, field, values[0]) if len(values) == 1 else TQ.term_set_query(schema, field, values)
    if kind in (Kind.COUNTRY, Kind.ASN):
        values = [str(v).upper() for v in f.values]
        return TQ.term_set_query(schema, field, values)
    if kind is Kind.INT:
        return TQ.term_set_query(schema, field, list(f.values))
    if kind is Kind.BOOL:
        return _any([_flag(schema, field, bool(v)) for v in f.values])
    if kind is Kind.DATE:
        dates = [v for v in f.values if isinstance(v, date)]
        if f.name == "before":
            bound = min(dates)
            return TQ.range_query(schema, field, tantivy.FieldType.Date, None, _day(bound), include_upper=False)
        bound = max(dates)
        return TQ.range_query(schema, field, tantivy.FieldType.Date, _day(bound + timedelta(days=1)), None)
    if kind is Kind.CIDR:
        return _in_networks(schema, field, f.values)
    raise ValueError(f"no index for filter {f.name}")


def _prefixed(schema: tantivy.Schema, field: str, values: list[str]) -> TQ:
    """Terms that are one of ``values`` or start with one and a colon. No regular expression (a
    long one was slow and took much memory, and a longer one passed tantivy's state limit): the
    terms themselves, and a prefix automaton of one state a character each (a fuzzy term of
    distance 0; tantivy-py has no range over text, and its phrase prefix stops at 50 terms)."""
    exact = TQ.term_set_query(schema, field, list(values))
    return _any([exact, *(TQ.fuzzy_term_query(schema, field, v + ":", distance=0, prefix=True) for v in values)])


def _in_networks(schema: tantivy.Schema, field: str, networks: tuple) -> TQ:
    """Addresses in any of ``networks``: single addresses as terms (looked up, where a range reads
    the whole ip column), the other networks as ranges."""
    single = [str(n.network_address) for n in networks if n.num_addresses == 1]
    queries = [TQ.term_set_query(schema, field, single)] if single else []
    for net in networks:
        if net.num_addresses > 1:
            for low, high in ip_ranges(net):
                queries.append(TQ.range_query(schema, field, tantivy.FieldType.IpAddr, str(low), str(high)))
    return _any(queries) if queries else TQ.empty_query()


def _flag(schema: tantivy.Schema, field: str, value: bool) -> TQ:
    if value or field not in TRUE_ONLY:
        return TQ.term_query(schema, field, value)
    return TQ.boolean_query([(Occur.Must, TQ.all_query()), (Occur.MustNot, TQ.term_query(schema, field, True))])


def compile_query(
    schema: tantivy.Schema, query: Query, current: bool = False, tool_services: ToolServices | None = None
) -> TQ:
    """A tantivy query matching what ``query`` means (it must have parsed without errors);
    ``current``: only the latest banner of each service; ``tool_services``: a tool's tag matches
    the current banner of every service it found (TOOL_TAGS), not only of those it found last."""
    clauses: list[tuple[Occur, TQ]] = []
    if current:
        clauses.append((Occur.Must, TQ.term_query(schema, "b_current", True)))
    for term in query.terms:
        if isinstance(term, Text):
            q = _text_query(schema, "text", term.text)
        else:
            q = filter_query(schema, term, tool_services)
        clauses.append((Occur.MustNot if term.negated else Occur.Must, q))
    if not any(occur is Occur.Must for occur, _ in clauses):
        clauses.append((Occur.Must, TQ.all_query()))
    return TQ.boolean_query(clauses)
