"""The key footer, compact below 120 columns: at 80 the padding around each key costs two more
keys' worth of room (F1 Help lists every key anyway)."""

from __future__ import annotations

from textual import events
from textual.widgets import Footer

COMPACT_BELOW = 120  # columns


class KeyFooter(Footer):
    # Compact gives the docked palette key a right margin, and the key scrolled under it shows there.
    DEFAULT_CSS = """
    KeyFooter.-compact FooterKey.-command-palette { margin-right: 0; padding-right: 1; }
    """

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < COMPACT_BELOW
