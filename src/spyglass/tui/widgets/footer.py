"""The key footer, compact below 120 columns: at 80 the padding around each key costs two more
keys' worth of room (F1 Help lists every key anyway)."""

from __future__ import annotations

from textual import events
from textual.widgets import Footer

COMPACT_BELOW = 120  # columns


class KeyFooter(Footer):
    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < COMPACT_BELOW
