"""What a parsed query is: free-text words and phrases, and filters, each maybe negated."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from spyglass.netblocks import Network

Value = str | int | bool | date | Network


@dataclass(frozen=True)
class Span:
    start: int
    end: int


@dataclass(frozen=True)
class Text:
    """Free text: a word, or a quoted phrase, matched against the banner."""

    text: str
    phrase: bool = False
    negated: bool = False
    span: Span = Span(0, 0)


@dataclass(frozen=True)
class Filter:
    """``name:value[,value...]`` (any value matches); ``-name:...`` excludes them."""

    name: str
    values: tuple[Value, ...]
    negated: bool = False
    span: Span = Span(0, 0)


@dataclass(frozen=True)
class QueryError:
    message: str
    span: Span

    def __str__(self) -> str:
        return f"{self.message} (at {self.span.start + 1})"


@dataclass
class Query:
    source: str
    terms: list[Text | Filter] = field(default_factory=list)
    errors: list[QueryError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def filters(self) -> list[Filter]:
        return [t for t in self.terms if isinstance(t, Filter)]

    @property
    def texts(self) -> list[Text]:
        return [t for t in self.terms if isinstance(t, Text)]

    @property
    def has_filters(self) -> bool:
        return bool(self.filters)


@dataclass(frozen=True)
class Facet:
    name: str
    size: int
