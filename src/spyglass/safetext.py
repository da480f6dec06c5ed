"""The one path by which untrusted text (banners, titles, hostnames, certificate fields, server
messages) reaches a terminal.

Nothing here interprets markup, and no escape sequence or control character survives: each is
shown as a visible placeholder. Very long text is cut with a marker saying how much was cut.
"""

from __future__ import annotations

import re
from typing import Any

MAX_CHARS = 4096

# C0 controls become their Unicode "control picture" (ESC shows as ␛), DEL shows as ␡.
_C0 = {c: chr(0x2400 + c) for c in range(0x20)}
_C0[0x7F] = "\u2421"
# C1 controls (0x80-0x9F, including the 8-bit CSI 0x9B and OSC 0x9D), bidirectional overrides
# and isolates (which can reorder what a reader sees), and lone surrogates (undecodable bytes)
# become U+FFFD.
_REPLACED = re.compile("[\u0080-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\ud800-\udfff]")
_TABLE = {**_C0, 0x0A: "\n", 0x09: "\t"}
_ONE_LINE = {**_C0, 0x0A: "\u240a", 0x09: " "}


def to_str(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def clean(value: Any, *, one_line: bool = False, max_chars: int = MAX_CHARS) -> str:
    """``value`` as inert text: controls visible, at most ``max_chars`` characters plus a marker.

    ``one_line`` also shows newlines as ␊ and tabs as spaces (for table cells and titles).
    """
    text = to_str(value)
    cut = len(text) - max_chars
    if cut > 0:
        text = text[:max_chars]
    text = text.replace("\r\n", "\n")  # banners end lines with CRLF; a lone CR still shows
    text = _REPLACED.sub("\ufffd", text.translate(_ONE_LINE if one_line else _TABLE))
    if cut > 0:
        text += f"… [{cut:,} more characters]"
    return text


def safe_text(value: Any, style: str = "", *, one_line: bool = False, max_chars: int = MAX_CHARS):
    """A Rich ``Text`` of ``value`` for widgets: never parsed as markup."""
    from rich.text import Text

    return Text(clean(value, one_line=one_line, max_chars=max_chars), style=style, no_wrap=one_line)


def fit(value: Any, width: int) -> str:
    """One inert line of at most ``width`` characters, cut with a single "…" (for table cells)."""
    text = clean(value, one_line=True, max_chars=max(width * 4, 64))
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"
