"""The Linux console (TERM=linux): its fonts hold the 256 glyphs of CP437-like sets, so rounded
corners, eighth blocks (Textual's tall and wide borders) and symbols like ● show as blanks or
diamonds. There the dashboard draws boxes with the plain line-drawing set those fonts do have."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from textual import _border
from textual.css.types import EdgeType

PLAIN: Final[EdgeType] = "solid"  # ┌─┐│└┘: in every Linux console font
FANCY: Final[tuple[EdgeType, ...]] = ("round", "tall", "wide", "vkey", "hkey")  # the panes and Textual use them


def linux_console(environ: Mapping[str, str]) -> bool:
    return environ.get("TERM", "").strip().lower() == "linux"


def on_console(app: object) -> bool:
    """Whether ``app`` (the dashboard; any other app: no) draws on the Linux console."""
    return bool(getattr(app, "linux_console", False))


# What the console fonts lack, as what they have (box corners are handled by plain_boxes).
_CONSOLE_GLYPHS = str.maketrans(
    {
        "✓": "+",
        "✗": "x",
        "⏎": "Enter",
        "↓": "v",
        "↑": "^",
        "●": "*",
        "❚": "|",
        "‹": "<",
        "›": ">",
        **dict.fromkeys("▁▂▃", "."),
        **dict.fromkeys("▄▅", "o"),
        **dict.fromkeys("▆▇", "O"),
        **dict.fromkeys("▏▎▍▌▋▊▉", ""),
    }
)


def for_console(app: object, text: str) -> str:
    """``text`` as the Linux console can show it (unchanged anywhere else)."""
    return text.translate(_CONSOLE_GLYPHS) if on_console(app) else text


def dot(app: object) -> str:
    """The round mark (connection state, map markers and their legend), or what the console has."""
    return "*" if on_console(app) else "●"


def plain_boxes() -> Callable[[], None]:
    """Draw the fancy border types with the plain set, and scrollbars without eighth blocks; returns
    what puts them back (the tables are Textual's module globals: a test's next app must not inherit
    them)."""
    from textual.command import SearchIcon
    from textual.scrollbar import ScrollBarRender

    saved = {name: (_border.BORDER_CHARS[name], _border.BORDER_LOCATIONS[name]) for name in FANCY}
    bars = ScrollBarRender.VERTICAL_BARS, ScrollBarRender.HORIZONTAL_BARS
    for name in FANCY:
        _border.BORDER_CHARS[name] = _border.BORDER_CHARS[PLAIN]
        _border.BORDER_LOCATIONS[name] = _border.BORDER_LOCATIONS[PLAIN]
    _border.get_box.cache_clear()
    # Scrollbar thumbs end in eighth blocks: blank cells in the thumb's colour show the same thing.
    ScrollBarRender.VERTICAL_BARS = ScrollBarRender.HORIZONTAL_BARS = [" "] * 8
    icon_render = SearchIcon.render  # the palette's magnifier emoji
    SearchIcon.render = lambda self: ">"  # type: ignore[method-assign]

    def restore() -> None:
        for name, (chars, locations) in saved.items():
            _border.BORDER_CHARS[name] = chars
            _border.BORDER_LOCATIONS[name] = locations
        _border.get_box.cache_clear()
        ScrollBarRender.VERTICAL_BARS, ScrollBarRender.HORIZONTAL_BARS = bars
        SearchIcon.render = icon_render  # type: ignore[method-assign]

    return restore
