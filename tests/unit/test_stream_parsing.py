"""The stream client's hot path: lines split from chunks cut anywhere, SSE events, exact
integers, the unvalidated fast path building what validation would, and the backoff's bounds."""

from __future__ import annotations

import json
import random

from hypothesis import given
from hypothesis import strategies as st

from spyglass import models as m
from spyglass.client.stream import Backoff, JsonLines, SseParser, _fast_banner, loads
from spyglass.datagen import generate

BANNERS = list(generate(200, seed=5))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


def cut(data: bytes, points: list[int]) -> list[bytes]:
    edges = sorted({0, len(data), *(p % (len(data) + 1) for p in points)})
    return [data[a:b] for a, b in zip(edges, edges[1:], strict=False)]


@given(
    st.lists(st.dictionaries(st.text(max_size=6), json_values, max_size=4), max_size=8), st.lists(st.integers(0, 10**6))
)
def test_json_lines_from_chunks_cut_anywhere(objects, points):
    data = b"".join(json.dumps(o).encode() + b"\n" + (b"\n" if i % 3 == 0 else b"") for i, o in enumerate(objects))
    splitter = JsonLines()
    lines = [line for chunk in cut(data, points) for line in splitter.feed(chunk)]
    assert [json.loads(line) for line in lines] == objects  # the empty lines (keep-alives) are gone


@given(
    st.lists(st.dictionaries(st.text(max_size=6), json_values, max_size=4), max_size=8), st.lists(st.integers(0, 10**6))
)
def test_sse_events_from_chunks_cut_anywhere(objects, points):
    parts = [b": keep-alive\n\n"]
    for i, o in enumerate(objects):
        newline = b"\r\n" if i % 2 else b"\n"
        parts.append(b"event: banner" + newline if i % 3 == 0 else b"")
        parts.append(b"data: " + json.dumps(o).encode() + newline + newline)
    data = b"".join(parts)
    parser = SseParser()
    events = [event for chunk in cut(data, points) for event in parser.feed(chunk)]
    assert [json.loads(e) for e in events] == objects


def test_integers_past_64_bits_stay_exact():
    line = b'{"ssl": {"cert": {"serial": 123456789012345678901234567890}}, "port": 443}'
    assert loads(line)["ssl"]["cert"]["serial"] == 123456789012345678901234567890
    assert loads(b'{"port": 443, "hash": -1234567}') == {"port": 443, "hash": -1234567}


def test_the_fast_path_builds_what_validation_builds():
    for b in BANNERS:
        fast = _fast_banner(b)
        assert fast is not None
        assert fast == m.Banner.model_validate(b) and fast.to_api() == b


@given(
    st.dictionaries(st.sampled_from(["ip_str", "ipv6", "port", "transport", "timestamp", "_id", "org"]), json_values)
)
def test_the_fast_path_never_takes_what_validation_would_change(body):
    fast = _fast_banner(body)
    if fast is not None:
        assert fast == m.Banner.model_validate(body)


def test_backoff_grows_with_jitter_within_bounds():
    backoff = Backoff(base=0.5, cap=8.0, rng=random.Random(3))
    for attempt in range(1, 12):
        ceiling = min(8.0, 0.5 * 2 ** (attempt - 1))
        delays = [backoff.delay(attempt) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) > 1  # jitter: reconnecting clients spread out


def test_the_asn_stream_matches_an_asn_sent_as_a_string_or_an_int():
    from spyglass.server.stream.hub import Published, match_asn

    wanted = match_asn(["3356"])
    for asn in ("AS3356", "as3356", 3356):
        assert wanted(Published.of({"ip_str": "127.0.0.1", "port": 1, "asn": asn}))
    for odd in (True, 3356.5, ["AS3356"], None):
        assert not wanted(Published.of({"ip_str": "127.0.0.1", "port": 1, "asn": odd}))
