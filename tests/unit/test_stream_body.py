"""The stream's response body: what a reader's subscription queued, framed as JSON lines or as
Server-Sent Events, in one chunk, with the debug event first when banners were discarded."""

from __future__ import annotations

import json

import pytest

from spyglass.server.stream.host import follow
from spyglass.server.stream.hub import StreamHub


async def first_chunk(fmt: str, debug: bool, lines: list[bytes], limit: int) -> bytes:
    hub = StreamHub("intel", queue_limit=limit)
    sub = hub.subscribe()
    for line in lines:
        sub.offer(line)
    body = follow(hub, sub, fmt, debug)
    try:
        return await anext(body)
    finally:
        await body.aclose()


LINES = [json.dumps({"port": port}).encode() for port in (21, 22, 23)]


@pytest.mark.parametrize("debug", [False, True])
async def test_json_lines_one_banner_a_line(debug):
    chunk = await first_chunk("json", debug, LINES, limit=2)  # the first of three discarded
    items = [json.loads(line) for line in chunk.decode().splitlines()]
    kept = [{"port": 22}, {"port": 23}]
    assert items == ([{"event": "debug", "discarded": 1}, *kept] if debug else kept)
    assert chunk.endswith(b"}\n")


@pytest.mark.parametrize("debug", [False, True])
async def test_server_sent_events_one_banner_an_event(debug):
    chunk = await first_chunk("sse", debug, LINES, limit=2)
    events = chunk.decode().split("\n\n")
    assert events[-1] == ""  # every event ends with a blank line
    assert all(event.startswith("data: ") and "\n" not in event for event in events[:-1])
    items = [json.loads(event.removeprefix("data: ")) for event in events[:-1]]
    kept = [{"port": 22}, {"port": 23}]
    assert items == ([{"event": "debug", "discarded": 1}, *kept] if debug else kept)
