"""Command palette entries made from what is typed: an address opens the host, a name can be pinged
from everywhere, and any text runs as a search. They go through the app as Navigate messages."""

from __future__ import annotations

import ipaddress
from functools import partial

from textual.command import Hit, Hits, Provider
from textual.content import Content

from spyglass.safetext import clean


def is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def looks_like_hostname(text: str) -> bool:
    return "." in text and " " not in text and ":" not in text and len(text) <= 253


class SpyglassCommands(Provider):
    async def search(self, query: str) -> Hits:
        from spyglass.tui.panes.base import OpenHost, PingTarget, RunSearch

        text = query.strip()
        if not text:
            return
        shown = clean(text, one_line=True, max_chars=80)  # typed text is shown plain, never as markup
        post = self.app.post_message
        if is_address(text):
            yield Hit(1.0, Content(f"Open host {shown}"), partial(post, OpenHost(text)), help="Host pane")
        if is_address(text) or looks_like_hostname(text):
            yield Hit(0.95, Content(f"Ping {shown} from everywhere"), partial(post, PingTarget(text)), help="Geo pane")
        yield Hit(
            0.9,
            Content(f"Search {shown}"),
            partial(post, RunSearch(text)),
            help="Search pane (a filter costs 1 query credit)",
        )
