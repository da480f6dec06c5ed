"""The saved-query directory, as every directory state keeps it: the starting set
(server/state/directoryseed.py) and what users save, vote on and tag. SQLite in the data dir
(server/state/sqlite/directory.py) or PostgreSQL (server/state/postgres/directory.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from spyglass.tags import MAX_TAGS, TAG, check_tags  # noqa: F401 (the rule is shared with the dashboard)

PAGE_SIZE = 10
# Words and tags of one search: each is a condition of its SQL, and SQLite refuses a condition
# deeper than 1,000 ("Expression tree is too large"); no one looks for more than a few. Each word is
# a scan of every saved query's text, so its length is bounded too. A plan may allow fewer.
MAX_SEARCH_TERMS = 32
MAX_WORD_LENGTH = 100
# Put before every character that starts a word in the text a search looks in (``words``): a word
# is found at a word's start by a plain substring search, on SQLite and PostgreSQL alike, with no
# regular expression over what a caller typed. Saved text holds no control character.
MARK = "\x01"
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


@dataclass(frozen=True)
class Quota:
    """What one account may keep in the shared directory (its plan's): ``total`` queries, of which
    ``per_hour`` saved in the last hour, so that no account owns the listings and tags."""

    total: int
    per_hour: int


class OverQuota(Exception):
    """Nothing was saved: the account holds ``quota.total`` queries, or saved ``quota.per_hour`` in
    the last hour (``wait``: seconds until the oldest of those is an hour old)."""

    def __init__(self, quota: Quota, hourly: bool, wait: float = 0.0) -> None:
        super().__init__(quota, hourly, wait)
        self.quota, self.hourly, self.wait = quota, hourly, wait


def check_quota(quota: Quota | None, kept: int, recent: list[str]) -> None:
    """OverQuota unless one more query fits beside ``kept`` of the account's, ``recent`` the
    timestamps of those saved within the hour (as :func:`hour_ago` bounds them), oldest first."""
    if quota is None:
        return
    if kept >= quota.total:
        raise OverQuota(quota, hourly=False)
    if len(recent) >= quota.per_hour:
        oldest = datetime.strptime(recent[0], "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=UTC)
        raise OverQuota(quota, hourly=True, wait=(oldest + timedelta(hours=1) - datetime.now(UTC)).total_seconds())


def hour_ago() -> str:
    """The timestamp an hour before now, in the form :func:`saved_now` writes (they sort as text)."""
    return (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.%f")


def check_search(
    words: list[str], tags: list[str], most: int = MAX_SEARCH_TERMS, longest: int = MAX_WORD_LENGTH, who: str = ""
) -> None:
    """ValueError past ``most`` words and tags or a word or tag longer than ``longest``; ``who``
    (a plan) is named as the one that allows them."""
    allows = f"{who} allows" if who else "at most"
    if len(words) + len(tags) > most:
        raise ValueError(f"{len(words) + len(tags):,} words and tags; {allows} {most} in one search")
    if long := next((w for w in (*words, *tags) if len(w) > longest), None):
        raise ValueError(f"a word of {len(long):,} characters; {allows} {longest} characters a word")


def marked(text: str) -> str:
    """``text`` in lower case with :data:`MARK` before each character at a word's start (the
    first, and any after a character that is not a letter, digit or ``_``)."""
    out: list[str] = []
    in_word = False
    for c in text.lower():
        if not in_word:
            out.append(MARK)
        out.append(c)
        in_word = c.isalnum() or c == "_"
    return "".join(out)


def search_text(title: str, description: str, query: str, tags: list[str]) -> str:
    """What a search looks in (the ``words`` column): each field marked, a line each, so that no
    word (it holds no line break) is found across two of them."""
    return "\n".join(marked(t) for t in (title, description, query, *tags))


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
        any case ("plc" finds "PLCs"), with every tag: ``marked(word)`` in ``search_text``.
        ValueError past MAX_SEARCH_TERMS or MAX_WORD_LENGTH."""

    def tags(self, size: int) -> tuple[list[tuple[str, int]], int]:
        """The ``size`` most used tags with their counts, and how many tags there are."""

    def save(
        self, owner: int, title: str, query: str, description: str, tags: list[str], quota: Quota | None = None
    ) -> Saved:
        """With a ``quota``, the owner's queries are counted in the transaction that saves, which no
        other save of the owner's on any backend interleaves with: OverQuota, nothing saved."""

    def vote(self, query_id: int, account: int, value: int) -> Saved | None:
        """The account's vote (+1 or -1; voting again replaces it); None if there is no such query."""

    def add_tags(self, query_id: int, account: int, tags: list[str]) -> Saved | None:
        """Tag the account's own query; None if there is no such query, NotYours if not its own."""

    def delete(self, query_id: int, account: int) -> bool:
        """Delete the account's own query; False if there is none, NotYours if not its own."""
