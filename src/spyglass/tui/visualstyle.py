"""Reverse video in lists (Textual 8.x, pinned in pyproject).

`Widget.get_visual_style`, which `OptionList` draws its rows with, builds its style from the CSS
`text-style` of the widget and its component classes but passes on only bold, dim, italic,
underline and strike: `reverse` is dropped. The list cursor, drawn in reverse video where there
is no colour to draw it with (NO_COLOR, 16 colours: app.tcss), was then bold only, like the
group headings around it, and nothing said which value Enter acts on. `install()` puts reverse
back where the component's CSS asks for it. Remove once Textual passes it on itself.
"""

from __future__ import annotations

from dataclasses import replace
from functools import wraps
from typing import Any

from textual.style import Style
from textual.widget import Widget


def install() -> None:
    """Patch `Widget.get_visual_style` once (idempotent)."""
    original = Widget.get_visual_style
    if hasattr(original, "__wrapped__"):
        return

    @wraps(original)
    def get_visual_style(self: Widget, *component_classes: str, partial: bool = False) -> Any:
        style: Style = original(self, *component_classes, partial=partial)
        if component_classes and not style.reverse:
            if self.get_component_rich_style(*component_classes, partial=partial).reverse:
                style = replace(style, reverse=True)
        return style

    Widget.get_visual_style = get_visual_style  # type: ignore[method-assign]
