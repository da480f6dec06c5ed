"""The search query language: one parser for the backend, the TUI and the tokens endpoint."""

from spyglass.query.ast import Facet, Filter, Query, QueryError, Span, Text
from spyglass.query.filters import FACETS, FILTER_EXAMPLES, FILTERS, IDENTIFYING_FACETS, SEEN_FILTERS, Kind
from spyglass.query.parser import QuerySyntaxError, parse, parse_facets, parse_strict, tokens

__all__ = [
    "FACETS",
    "FILTER_EXAMPLES",
    "FILTERS",
    "IDENTIFYING_FACETS",
    "Facet",
    "Filter",
    "Kind",
    "Query",
    "QueryError",
    "QuerySyntaxError",
    "SEEN_FILTERS",
    "Span",
    "Text",
    "parse",
    "parse_facets",
    "parse_strict",
    "tokens",
]
