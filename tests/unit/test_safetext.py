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


def test_fit_cuts_one_line_with_an_ellipsis():
    from spyglass.safetext import fit

    assert fit("Granite State University", 10) == "Granite S…"
    assert fit("a\x1b[31mb", 20) == "a␛[31mb"
    assert fit("short", 10) == "short"
