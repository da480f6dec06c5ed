"""Pasted text stays text: the ESCs of a bracketed paste dropped before Textual's own parser reads
them (newcomer trial 26: a pasted ESC[0m CR ran a search, a pasted OSC's BEL opened the pane list)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual import events

from spyglass.tui.pastesafe import END, START, PasteSafeParser, install


def parsed(*reads: str) -> list:
    parser = PasteSafeParser()
    out = []
    for data in reads:
        out += list(parser.feed(data))
    return [(type(e).__name__, e.text if isinstance(e, events.Paste) else e.key) for e in out]


@pytest.mark.parametrize(
    "content, text",
    [
        ("tag:nmap\x1b[0m\rport:22", "tag:nmap[0m\rport:22"),
        ("a\x1b]0;X\x07 b", "a]0;X\x07 b"),
        ("ends in ESC\x1b", "ends in ESC"),
        ("\x1b[201", "[201"),  # half an end marker inside: text, and the paste goes on to the real one
        ("\x1b", ""),  # nothing but ESC: an empty paste
    ],
)
def test_a_paste_holding_escape_is_one_paste_and_no_key(content, text):
    assert parsed(START + content + END) == [("Paste", text)]


def test_keys_around_a_paste_are_keys():
    assert parsed("x" + START + "pasted\x1b[A" + END + "\r") == [
        ("Key", "x"),
        ("Paste", "pasted[A"),
        ("Key", "enter"),
    ]


@given(st.text(alphabet="ab\x1b[]~0123\r\x07", max_size=40), st.data())
def test_however_the_reads_split_it_a_paste_is_its_text_less_escape(content, data):
    wire = START + content + END + "z"
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=6)))
    reads = [wire[a:b] for a, b in zip([0, *cuts], [*cuts, len(wire)], strict=True) if a < b]
    assert parsed(*reads) == [("Paste", content.replace("\x1b", "")), ("Key", "z")]


def test_the_linux_driver_reads_keys_with_it_once_installed():
    from textual.drivers import linux_driver

    install()
    assert linux_driver.XTermParser is PasteSafeParser
