"""The stream pane's buffer without Textual: a filter is a view over what is kept, a pause holds
what arrives, and the size bounds everything (the view and what the pause holds included)."""

from __future__ import annotations

import json

from spyglass.query import parse
from spyglass.query.match import matcher
from spyglass.tui.streambuffer import StreamBuffer, TailEntry


def line(port: int) -> bytes:
    return json.dumps({"ip_str": "198.18.0.1", "port": port, "transport": "tcp", "timestamp": "2026-01-01"}).encode()


def describe(raw: bytes) -> tuple[str, str]:
    return raw.decode(), ""


def ports(entries: list[TailEntry]) -> list[int]:
    return [json.loads(entry.raw)["port"] for entry in entries]


def feed(buffer: StreamBuffer, port_list: list[int]) -> list[TailEntry]:
    for port in port_list:
        buffer.read(line(port))
    return buffer.deliver(*buffer.prepare(buffer.take(), buffer.matches, None, describe))


def view(buffer: StreamBuffer, text: str) -> list[TailEntry]:
    buffer.matches = matcher(parse(text)) if text else None
    return buffer.apply_view(buffer.matching(buffer.kept, buffer.matches))


def test_a_filter_shows_what_matches_and_clearing_it_shows_everything_kept():
    buffer = StreamBuffer(100)
    assert ports(feed(buffer, [22, 80, 22, 443])) == [22, 80, 22, 443]
    assert ports(view(buffer, "port:22")) == [22, 22]
    assert ports(feed(buffer, [80, 22])) == [22]  # shown under the filter; the 80 is kept all the same
    assert ports(view(buffer, "")) == [22, 80, 22, 443, 80, 22]
    assert buffer.received == 6 and buffer.dropped == 0


def test_a_pause_holds_what_arrives_and_a_filter_applied_meanwhile_sorts_both():
    buffer = StreamBuffer(100)
    feed(buffer, [22, 80])
    assert buffer.pause() == []
    assert feed(buffer, [22, 443]) == [] and ports(list(buffer.pending)) == [22, 443]
    assert ports(view(buffer, "port:22")) == [22]  # frozen: what was shown before the pause
    assert ports(list(buffer.pending)) == [22]
    assert ports(buffer.pause()) == [22] and not buffer.pending


def test_the_size_bounds_the_kept_lines_and_what_a_pause_holds():
    buffer = StreamBuffer(4)
    feed(buffer, [1, 2, 3])
    buffer.pause()
    feed(buffer, [4, 5])
    feed(buffer, [6, 7, 8])  # the oldest held line falls off with the kept ones
    assert ports(list(buffer.kept)) == [5, 6, 7, 8] and buffer.oldest == 4
    assert ports(list(buffer.pending)) == [5, 6, 7, 8] and buffer.dropped == 1
    assert ports(view(buffer, "")) == []  # nothing before the pause is still kept
    buffer.resize(2)
    assert ports(list(buffer.kept)) == [7, 8] and ports(list(buffer.pending)) == [7, 8]


def test_a_line_that_is_not_a_banner_is_kept_but_no_filter_shows_it():
    buffer = StreamBuffer(10)
    buffer.read(b"not json")
    buffer.read(line(22))
    feed(buffer, [])
    assert len(buffer.kept) == 2
    assert ports(view(buffer, "port:22")) == [22]
    assert len(view(buffer, "")) == 2
