"""The stream pane's buffer without Textual: a filter is a view over what is kept, a pause holds
what arrives, and the size bounds everything (the view and what the pause holds included)."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

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


async def test_the_pump_keeps_each_batch_and_shows_what_the_filter_lets_through():
    buffer = StreamBuffer(10)
    buffer.matches = matcher(parse("port:22"))
    shown: list[TailEntry] = []
    done = asyncio.Event()

    def show(entries: list[TailEntry]) -> None:
        shown.extend(entries)
        done.set()

    for port in (22, 80, 22):
        buffer.read(line(port))
    pump = asyncio.create_task(buffer.pump(lambda: describe, lambda: None, show, every=0))
    await done.wait()
    pump.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pump
    assert ports(shown) == [22, 22] and ports(list(buffer.kept)) == [22, 80, 22] and not buffer.inbox


class Held:
    """A recorder that holds the batch in its thread until released."""

    def __init__(self) -> None:
        self.writing, self.release = threading.Event(), threading.Event()

    def write(self, line: bytes) -> None:
        self.writing.set()
        self.release.wait(30)


@pytest.mark.parametrize("cleared", [False, True])
async def test_a_batch_in_its_thread_when_the_pump_stops_is_kept_unless_another_stream_began(cleared):
    buffer = StreamBuffer(10)
    held, shown = Held(), []
    buffer.read(line(443))
    pump = asyncio.create_task(buffer.pump(lambda: describe, lambda: held, shown.extend, every=0))
    await asyncio.to_thread(held.writing.wait, 30)
    pump.cancel()  # as the stream is followed again: the batch in the thread runs on
    if cleared:
        buffer.clear()  # another stream: what was read of the last one is not kept
    held.release.set()
    with pytest.raises(asyncio.CancelledError):
        await pump
    assert ports(shown) == ports(list(buffer.kept)) == ([] if cleared else [443])
