"""Text a pane puts in one of its boxes (a pivot's argument, a tag chosen, an alert edited)."""

from __future__ import annotations

from textual.widgets import Input


def put_text(box: Input, value: str) -> None:
    """``value`` in ``box``, its cursor after it: a box keeps where its last use left the cursor,
    and what is typed next landed inside the new text (``tag:djatabase``: newcomer trial 7)."""
    box.value = value
    box.cursor_position = len(value)
