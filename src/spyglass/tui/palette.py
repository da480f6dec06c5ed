"""Command palette entries made from what is typed: an address opens the host, a name can be pinged
from everywhere, and any text runs as a search. They go through the app as Navigate messages."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from spyglass.netools.targets import bad_address, is_hostname, is_ip
from spyglass.safetext import clean
from spyglass.tui.messages import ExcludeInSearch, OpenHost, PingTarget, RunSearch
from spyglass.tui.panes.base import Pane

FIRST = 100.0  # a hit's score above any fuzzy match's (Textual's: about 4 a scattered match, 12 a word's start)


class SpyglassCommands(Provider):
    def _pivot_commands(self) -> list[tuple[str, Callable[[], object], str]]:
        """For the value selected in a pivot list of the pane in view: search on it, or exclude it."""
        pane = getattr(self.app, "current_pane", lambda: None)()
        pivot = pane.pivot_choice() if isinstance(pane, Pane) else None
        if pivot is None:
            return []
        term = clean(pivot.term, one_line=True, max_chars=80)
        post = self.app.post_message
        return [
            (f"Pivot on {term}", partial(post, RunSearch(pivot.query)), "Search pane: every banner with this value"),
            (f"Exclude {term} from the search", partial(post, ExcludeInSearch(pivot.term)), "Search pane"),
        ]

    async def discover(self) -> Hits:
        for title, command, help_text in self._pivot_commands():
            yield DiscoveryHit(Content(title), command, help=help_text)

    async def search(self, query: str) -> Hits:
        text = query.strip()
        if not text:
            return
        matcher = self.matcher(text)
        for title, command, help_text in self._pivot_commands():
            if score := matcher.match(title):
                yield Hit(score, Content(title), command, help=help_text)
        shown = clean(text, one_line=True, max_chars=80)  # typed text is shown plain, never as markup
        post = self.app.post_message
        if is_ip(text):
            yield Hit(1.0, Content(f"Open host {shown}"), partial(post, OpenHost(text)), help="Host pane")
        # a bare word is a search; numbers and dots that are no address (999.1.1.1) are not a name
        if is_ip(text) or ("." in text and is_hostname(text) and not bad_address(text)):
            yield Hit(0.95, Content(f"Ping {shown} from everywhere"), partial(post, PingTarget(text)), help="Geo pane")
        # Text that begins no word of a command's name is a search, first ("red" ran "Go to Trends",
        # the fuzzy match of tREnDs: newcomer trial 25); "tre" still goes to Trends first.
        titles = [title for title, _, _ in self._pivot_commands()]
        titles += [command.title for command in self.app.get_system_commands(self.screen)]
        named = any(word.lower().startswith(text.lower()) for title in titles for word in title.split())
        yield Hit(
            0.9 if named or is_ip(text) else FIRST,
            Content(f"Search {shown}"),
            partial(post, RunSearch(text)),
            help="Search pane (a filter costs 1 query credit)",
        )
