"""Hostile text stays inert on the way to the terminal."""

from __future__ import annotations

import pytest
from rich.console import Console

from spyglass.safetext import MAX_CHARS, clean, safe_text

HOSTILE = {
    "csi": "\x1b[2J\x1b[31mred",
    "osc52 clipboard": "\x1b]52;c;cm0gLXJmIH4=\x07",
    "osc title": "\x1b]0;owned\x1b\\",
    "8-bit csi": "\x9b31m",
    "rich markup": "[bold]x[/bold] [link=https://evil.example]click[/link] [/]",
    "c0": "".join(chr(c) for c in range(0x20) if c not in (0x0A, 0x09)),
    "c1": "".join(chr(c) for c in range(0x80, 0xA0)),
    "bidi": "abc\u202edcba\u2066x\u2069\u200f",
    "nul": "a\x00b",
    "del": "a\x7fb",
}


def rendered(text) -> str:
    console = Console(width=200, force_terminal=True, color_system=None, record=True, file=open("/dev/null", "w"))
    console.print(text)
    return console.export_text()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_no_control_character_survives(name):
    out = clean(HOSTILE[name], one_line=True)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in out)
    assert not any(c in out for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


def test_escape_sequences_are_shown_not_executed():
    assert clean(HOSTILE["osc52 clipboard"]) == "␛]52;c;cm0gLXJmIH4=␇"
    assert clean(HOSTILE["csi"]) == "␛[2J␛[31mred"
    assert clean("a\x00b") == "a␀b"


def test_markup_is_literal_text():
    text = safe_text(HOSTILE["rich markup"])
    assert text.spans == []
    assert rendered(text).strip() == HOSTILE["rich markup"]


def test_invalid_utf8_bytes():
    assert clean(b"ok\xff\xfe\x1b[0m") == "ok\ufffd\ufffd␛[0m"


def test_lone_surrogates_from_undecodable_input():
    assert clean("a\udcff") == "a\ufffd"


def test_newlines_kept_in_blocks_and_shown_in_lines():
    banner = "HTTP/1.1 200 OK\r\nServer: x\r\n\tstray\r"
    assert clean(banner) == "HTTP/1.1 200 OK\nServer: x\n\tstray␍"
    assert clean(banner, one_line=True) == "HTTP/1.1 200 OK␊Server: x␊ stray␍"


def test_a_megabyte_line_is_cut_with_a_marker():
    line = "A" * 1_000_000
    out = clean(line)
    assert out.startswith("A" * MAX_CHARS)
    assert out.endswith(f"… [{1_000_000 - MAX_CHARS:,} more characters]")
    assert len(out) < MAX_CHARS + 40


def test_none_and_numbers():
    assert clean(None) == "" and clean(443) == "443"
    assert clean(10**5000) == f"a {(10**5000).bit_length():,}-bit number"  # str() refuses it


def test_fit_cuts_one_line_with_an_ellipsis():
    from spyglass.safetext import fit

    assert fit("Granite State University", 10) == "Granite S…"
    assert fit("a\x1b[31mb", 20) == "a␛[31mb"
    assert fit("short", 10) == "short"


# -- invisible characters, cell widths ------------------------------------------------------------
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u2028\u2029\U000e0041\u3164"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


def test_zero_width_and_format_characters_show_as_replacement_characters():
    assert clean("a\u200bb\u200dc\ufeffd") == "a\ufffdb\ufffdc\ufffdd"
    assert clean(INVISIBLE) == "\ufffd" * len(INVISIBLE)
    assert clean("👨\u200d👩") == "👨\ufffd👩"  # a ZWJ sequence shows its parts


def test_every_format_character_of_this_python_is_covered():
    import sys
    import unicodedata

    from spyglass.safetext import _REPLACED

    cf = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in ("Cf", "Zl", "Zp")]
    assert cf and all(_REPLACED.fullmatch(c) for c in cf)


def test_fit_counts_terminal_cells():
    from rich.cells import cell_len

    from spyglass.safetext import fit

    assert fit("漢字漢字漢字", 7) == "漢字漢…"  # 3 wide characters (6 cells) + the marker
    assert cell_len(fit("漢字漢字漢字", 6)) == 6
    assert fit("漢字漢字", 5).endswith("…") and cell_len(fit("漢字漢字", 5)) == 5
    assert fit("😀😀😀", 4) == "😀 …"  # a half cell cannot hold an emoji: padded
    assert fit("漢字", 4) == "漢字"
    assert fit("abc", 0) == "" and fit("abc", 1) == "…"


# -- the clipboard ---------------------------------------------------------------------------------
def test_clipboard_drops_escape_sequences_whole():
    from spyglass.safetext import for_clipboard

    text, cut = for_clipboard("ls\x1b[201~rm -rf ~\x1b[200~\n\x9b201~x\x1b]52;c;Zm9v\x07y\x1b]0;t\x1b\\z\x1bcq")
    assert (text, cut) == ("lsrm -rf ~\nxyzq", 0)


def test_clipboard_keeps_lines_and_tabs_and_drops_the_rest():
    from spyglass.safetext import for_clipboard

    raw = "HTTP/1.1 200 OK\r\nServer:\tx\r\x00\x7f\x85\u202eend\u200b\udcff"
    assert for_clipboard(raw).text == "HTTP/1.1 200 OK\nServer:\tx\nend"


def test_clipboard_caps_the_size_on_a_character_boundary_and_says_so():
    from spyglass.safetext import CLIPBOARD_MAX_BYTES, for_clipboard

    copied = for_clipboard("é" * 1_000_000)  # 2 bytes each: 2 MB
    assert len(copied.text.encode()) <= CLIPBOARD_MAX_BYTES
    assert copied.text == "é" * (CLIPBOARD_MAX_BYTES // 2)
    assert copied.cut_bytes == 2_000_000 - CLIPBOARD_MAX_BYTES
    assert copied.note("the raw banner") == "Copied the raw banner (cut at 64 KiB, 1,934,464 bytes left out)"
    small = for_clipboard("€uro", max_bytes=4)  # € is 3 bytes
    assert small == ("€u", 2)
    assert for_clipboard("ok").note("the raw banner") == "Copied the raw banner"


# -- CSV cells ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, cell",
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+1", "'+1"),
        ("-1+2", "'-1+2"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "' x"),  # one line a cell: a tab shows as a space
        ("\r=1", "'␍=1"),
        ("nginx", "nginx"),
        ("a=b", "a=b"),
        (-5, "'-5"),  # the rule is the first character, numbers too
        (4.99e36, "4.99e+36"),
        (None, ""),
        (True, "true"),
        (["-x", "y"], '["-x", "y"]'),
        ({"a": 1}, '{"a": 1}'),
        ("a\x1b[31mb\x00", "a␛[31mb␀"),
        ("x\u202ey", "x\ufffdy"),
    ],
)
def test_csv_cells_neutralise_formulas_and_show_controls(value, cell):
    from spyglass.safetext import for_csv

    assert for_csv(value) == cell


# -- properties: any string --------------------------------------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=300) | st.text(
    alphabet=st.sampled_from("\x1b\x9b\x07\x00\r\n\t[]/=@+-~201;\u202e\u200b\u200d\x85\x7f漢😀\ud800"), max_size=300
)


def _is_control(c: str) -> bool:
    return ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0


def _forbidden(text: str, allowed: str) -> list[str]:
    return [
        c
        for c in text
        if (_is_control(c) and c not in allowed) or c in BIDI or c in INVISIBLE or 0xD800 <= ord(c) <= 0xDFFF
    ]


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_screen_text_has_no_control_bidi_or_invisible_character(text):
    assert _forbidden(clean(text), "\n\t") == []
    assert _forbidden(clean(text, one_line=True), "") == []
    assert _forbidden(safe_text(text, one_line=True).plain, "") == []


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT, st.integers(min_value=0, max_value=40))
def test_fit_never_exceeds_its_width(text, width):
    from rich.cells import cell_len

    from spyglass.safetext import fit

    out = fit(text, width)
    assert cell_len(out) <= width
    assert _forbidden(out, "") == []


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT, st.integers(min_value=1, max_value=200))
def test_clipboard_text_is_inert_and_within_its_cap(text, max_bytes):
    from spyglass.safetext import for_clipboard

    out, cut = for_clipboard(text, max_bytes=max_bytes)
    assert _forbidden(out, "\n\t") == []
    assert len(out.encode()) <= max_bytes and cut >= 0


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_csv_cell_never_starts_a_formula(text):
    from spyglass.safetext import for_csv

    out = for_csv(text)
    assert not out.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert _forbidden(out, "\n\t") == []
