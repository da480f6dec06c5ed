"""The saved-query directory, as every directory state keeps it: the starting set
(server/directory/seed.py) and what users save, vote on and tag. SQLite in the data dir
(server/directory/store.py) or PostgreSQL (server/postgres/directory.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from spyglass.tags import MAX_TAGS, TAG, check_tags  # noqa: F401 (the rule is shared with the dashboard)

PAGE_SIZE = 10
# Words and tags of one search: each is a condition of its SQL, and SQLite refuses a condition
# deeper than 1,000 ("Expression tree is too large"); no one looks for more than a few.
MAX_SEARCH_TERMS = 32
SORTS = {"votes": "votes", "timestamp": "timestamp"}


class NotYours(Exception):
    """Only the account that saved a query may change it."""


@dataclass
class Saved:
    id: int
    title: str
    description: str
    query: str
    timestamp: str
    votes: int
    tags: list[str]
    owner: int | None


def check_search(words: list[str], tags: list[str]) -> None:
    """ValueError past MAX_SEARCH_TERMS words and tags."""
    if len(words) + len(tags) > MAX_SEARCH_TERMS:
        raise ValueError(f"{len(words) + len(tags):,} words and tags; at most {MAX_SEARCH_TERMS} in one search")


def saved_now() -> str:
    """A saved query's timestamp."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")


class DirectoryState(Protocol):
    """Where saved queries are kept; thread-safe, every write one transaction."""

    def close(self) -> None: ...

    def get(self, query_id: int) -> Saved | None: ...

    def listing(self, page: int, sort: str, order: str) -> tuple[list[Saved], int]: ...

    def search(self, words: list[str], tags: list[str], page: int) -> tuple[list[Saved], int]:
        """Queries whose title, description, query or tags hold every word at a word's start, in
        any case ("plc" finds "PLCs"), with every tag; ValueError past MAX_SEARCH_TERMS."""

    def tags(self, size: int) -> tuple[list[tuple[str, int]], int]:
        """The ``size`` most used tags with their counts, and how many tags there are."""

    def save(self, owner: int, title: str, query: str, description: str, tags: list[str]) -> Saved: ...

    def vote(self, query_id: int, account: int, value: int) -> Saved | None:
        """The account's vote (+1 or -1; voting again replaces it); None if there is no such query."""

    def add_tags(self, query_id: int, account: int, tags: list[str]) -> Saved | None:
        """Tag the account's own query; None if there is no such query, NotYours if not its own."""

    def delete(self, query_id: int, account: int) -> bool:
        """Delete the account's own query; False if there is none, NotYours if not its own."""
