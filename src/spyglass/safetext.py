"""The one path by which untrusted text (banners, titles, hostnames, certificate fields, server
messages) reaches a terminal, the clipboard or a spreadsheet.

Screen text (``clean``, ``safe_text``, ``fit``): nothing interprets markup and no escape sequence
or control character survives. The convention for what cannot be shown as itself:
- C0 controls show as their Unicode control picture (ESC as ␛, NUL as ␀), DEL as ␡;
- everything else that is invisible or reorders text becomes U+FFFD (�): C1 controls (0x9B is an
  8-bit CSI), every format character of category Cf (zero-width space U+200B, ZWNJ/ZWJ U+200C/D,
  word joiner U+2060, BOM U+FEFF, bidi embeddings, overrides, isolates and marks, soft hyphen,
  tag characters), the line/paragraph separators U+2028/U+2029, the blank Hangul fillers and the
  combining grapheme joiner, and lone surrogates (undecodable bytes).
Very long text is cut with a marker saying how much was cut. Widths are terminal cells, not
characters: a CJK character or an emoji takes two.

Clipboard text (``for_clipboard``) drops what screen text shows, and caps the size; CSV cells
(``for_csv``) are screen text that a spreadsheet will not run as a formula.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, NamedTuple

MAX_CHARS = 4096
CLIPBOARD_MAX_BYTES = 64 * 1024  # OSC 52 payloads (base64, 4/3 larger) over ~100 KB are refused
CSV_MAX_CHARS = 32_000  # spreadsheets refuse a cell over 32,767 characters

# Category Cf (Unicode 15.1), plus Zl/Zp and the invisible characters that are letters or marks:
# the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the combining grapheme joiner (U+034F)
# and the Khmer inherent vowels (U+17B4, U+17B5). tests/unit/test_safetext.py checks that every
# Cf character of the running Python is here.
_INVISIBLE = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"
)
_SURROGATES = "\ud800-\udfff"

# C0 controls become their Unicode "control picture" (ESC shows as ␛), DEL shows as ␡.
_C0 = {c: chr(0x2400 + c) for c in range(0x20)}
_C0[0x7F] = "\u2421"
_REPLACED = re.compile(f"[\u0080-\u009f{_INVISIBLE}{_SURROGATES}]")
_TABLE = {**_C0, 0x0A: "\n", 0x09: "\t"}
_ONE_LINE = {**_C0, 0x0A: "\u240a", 0x09: " "}

# Terminal escape sequences, 7-bit and 8-bit: CSI (the bracketed-paste markers ESC[200~ and
# ESC[201~ among them), string commands (OSC, DCS, SOS, PM, APC) and two-character escapes.
_ESCAPE_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]{0,4096}(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"
)
# What is left of a control after the sequences went (a lone ESC, NUL, CR...) is dropped too.
_DROPPED = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}{_SURROGATES}]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_CONTROLS = f"\x00-\x1f\x7f-\x9f{_INVISIBLE}{_SURROGATES}"
_CONTROL = re.compile(f"[{_CONTROLS}]")
# has_control as patterns an API document can carry, read alike by Python, ECMAScript and Rust:
# text without any, and such text that is not blank either (what .strip() leaves something of).
# Escaped as \uXXXX below U+10000, as itself above (\U is Python's alone); no surrogates,
# which no UTF-8 text (nor Rust's regex) holds. CONTROL_CLASS: the inside of a character class,
# for patterns of other text (a saved query's words).
CONTROL_CLASS = "".join(
    c if c == "-" or ord(c) >= 0x10000 else f"\\u{ord(c):04x}" for c in f"\x00-\x1f\x7f-\x9f{_INVISIBLE}"
)
NO_CONTROL_PATTERN = f"^[^{CONTROL_CLASS}]*$"
NOT_BLANK_PATTERN = f"^[^{CONTROL_CLASS}]*[^\\s{CONTROL_CLASS}][^{CONTROL_CLASS}]*$"


def cut_said(value: str, most: int, quoted: Callable[[str], str] = str) -> str:
    """``value`` as a message repeats it (``quoted``: ``repr`` for an id or a value): whole when
    short, else its first ``most`` characters and how long it was, never a caller's 16 MiB whole."""
    return quoted(value) if len(value) <= most else f"{quoted(value[:most])}… ({len(value):,} characters)"


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control or invisible character (line breaks and tabs included):
    what a name, a title or an address that people read and servers send must not."""
    return _CONTROL.search(text) is not None


def to_str(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    try:
        return str(value)
    except ValueError:  # an int past Python's digit limit (4,300 digits)
        return f"a {value.bit_length():,}-bit number" if isinstance(value, int) else "?"


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
    """One inert line of at most ``width`` terminal cells, cut with a single "…" (for table cells)."""
    from rich.cells import cell_len, set_cell_size

    text = clean(value, one_line=True, max_chars=max(width * 4, 64))
    if cell_len(text) <= width:
        return text
    if width <= 0:
        return ""
    # set_cell_size pads with a space where a wide character would straddle the edge.
    return set_cell_size(text, width - 1) + "…"


class ClipboardText(NamedTuple):
    text: str
    cut_bytes: int  # UTF-8 bytes left out past the cap; 0 when all of it fits

    def note(self, what: str) -> str:
        """What to tell the user, e.g. "Copied the raw banner (cut at 64 KiB, 3,210 bytes left out)"."""
        if not self.cut_bytes:
            return f"Copied {what}"
        kib = -(-len(self.text.encode()) // 1024)
        return f"Copied {what} (cut at {kib} KiB, {self.cut_bytes:,} bytes left out)"


def for_clipboard(value: Any, max_bytes: int = CLIPBOARD_MAX_BYTES) -> ClipboardText:
    """``value`` fit to paste into a shell or an editor: escape sequences, control characters,
    invisible characters and undecodable bytes removed (newlines and tabs kept, CR LF made LF),
    at most ``max_bytes`` of UTF-8 (cut on a character boundary)."""
    text = to_str(value).replace("\r\n", "\n").replace("\r", "\n")
    text = _DROPPED.sub("", _ESCAPE_SEQUENCE.sub("", text))
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return ClipboardText(data.decode("utf-8"), 0)
    kept = data[:max_bytes].decode("utf-8", errors="ignore")
    return ClipboardText(kept, len(data) - len(kept.encode("utf-8")))


def for_csv(value: Any, *, max_chars: int = CSV_MAX_CHARS) -> str:
    """One CSV cell on one line: controls visible, and any cell a spreadsheet could run as a formula
    (it starts with =, +, -, @, tab or CR; a negative number too) prefixed with ``'``. Lists and
    objects are written as JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    raw = json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else to_str(value)
    text = clean(raw, one_line=True, max_chars=max_chars)  # one line a cell: newlines show as ␊
    return "'" + text if raw.startswith(_FORMULA_START) or text.startswith(_FORMULA_START) else text
