"""A search's pages as one list that banners arriving meanwhile do not shift.

The service pages by offset (100 a page) over a newest-first order, so each banner collected
between two pages pushes the rows down by one: page 2 would repeat the end of page 1, and the newest
banners (which page 1 never showed) would turn up in the middle of the list. So the first page pins
the moment: a later page leaves out what was shown already and what is newer than the first page's
newest row (it arrived since; running the search again shows it), and a page left empty so (as many
banners arrived as a page holds) is followed by the next at once, a few at most. No row is shown
twice, and an arrival never makes one skipped: it only moves rows to a later page (a service
collected again moves to the top, as one arrival, and leaves its old place, as one departure above
the rows still to come: they stay where they were). This needs nothing of the server, so it works
the same with the original service; where page 1 is not newest first (a server that orders
otherwise), only the rows shown already are left out.

What it cannot see: a match that leaves the results with nothing arriving for it (a service
collected again that no longer matches the query) pulls the rows below it up by one, and one of
them can fall between two pages. Only a cursor the server honours would close that.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from itertools import pairwise
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spyglass.models import Banner, SearchResponse

PAGE = 100  # results per page, as the service gives them
MAX_SKIPPED = 3  # pages in a row that may hold nothing new before one is shown empty (each costs)


def moment(timestamp: object) -> datetime | None:
    """A banner's timestamp as an aware datetime (naive ones are UTC), None if it is not one."""
    if not isinstance(timestamp, str):
        return None
    try:
        parsed = datetime.fromisoformat(timestamp)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def identity(banner: Banner) -> tuple[str, int, str, str]:
    return (banner.address, banner.port, banner.transport, banner.timestamp)


class StablePages:
    """The pages after the first of one search: ``fetch(page)`` asks the service for one page."""

    def __init__(self, fetch: Callable[[int], Awaitable[SearchResponse]]) -> None:
        self._fetch = fetch
        self.seen: set[tuple[str, int, str, str]] = set()
        self.pin: datetime | None = None  # the first page's newest row: anything newer arrived since
        self.first_total = self.total = 0  # the matches the first page counted, the last page counted
        self.next_page = 2  # the service's next page (a page of the table may need several)

    @property
    def arrived(self) -> int:
        """How many more matches the service counts than at the first page."""
        return max(0, self.total - self.first_total)

    def first(self, matches: Sequence[Banner], total: int) -> None:
        """The first page, as shown: it pins the moment when it is newest first."""
        self.first_total = self.total = total
        self.seen = {identity(b) for b in matches}
        stamps = [moment(b.timestamp) for b in matches]
        known = [s for s in stamps if s is not None]
        if known and len(known) == len(stamps) and all(a >= b for a, b in pairwise(known)):
            self.pin = known[0]

    def fresh(self, matches: Sequence[Banner]) -> list[Banner]:
        """Of a later page, the rows to show: neither shown already nor newer than the first page."""
        out = []
        for b in matches:
            key = identity(b)
            if key in self.seen:
                continue
            when = moment(b.timestamp) if self.pin is not None else None
            if when is not None and self.pin is not None and when > self.pin:
                continue
            self.seen.add(key)
            out.append(b)
        return out

    async def next(self) -> tuple[list[Banner], bool]:
        """The next rows to show, and whether the service has more after them."""
        more = True
        for _ in range(MAX_SKIPPED + 1):
            page = self.next_page
            result = await self._fetch(page)
            self.next_page += 1
            self.total = result.total
            more = bool(result.matches) and page * PAGE < result.total
            rows = self.fresh(result.matches)
            if rows or not more:
                return rows, more
        return [], more
