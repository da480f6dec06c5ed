"""The stream client's hot path: lines split from chunks cut anywhere, SSE events, exact
integers, a StreamBanner reading as the JSON it holds whatever that is, and the backoff's bounds."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spyglass import models as m
from spyglass.client.errors import ResponseFormatError
from spyglass.client.streamparse import JsonLines, SseParser, StreamBanner
from spyglass.datagen import generate
from spyglass.exactjson import loads

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


CORE = ["ip_str", "ipv6", "port", "transport", "timestamp"]


@given(st.dictionaries(st.sampled_from([*CORE, "_id", "org", "ip", "ssl"]) | st.text(max_size=5), json_values))
def test_a_stream_banner_reads_as_the_json_it_holds(body):
    raw = json.dumps(body).encode()
    banner = StreamBanner(raw)
    assert banner.raw is raw  # kept as it came
    for name in CORE:  # the members decoded on arrival, as sent, whatever their type
        assert (name in banner) == (name in body)
        assert banner.get(name, "absent") == body.get(name, "absent")
    assert banner.port == body.get("port")
    assert dict(banner) == body and banner == body and len(banner) == len(body)


def test_stream_banners_of_real_shape_read_as_they_came():
    for b in BANNERS:
        banner = StreamBanner(json.dumps(b).encode())
        assert (banner.address, banner.port, banner.transport, banner.timestamp) == (
            b["ip_str"],
            b["port"],
            b["transport"],
            b["timestamp"],
        )
        assert banner.model() == m.Banner.model_validate(b)
        assert banner["location"] == b["location"]


def test_a_stream_banner_keeps_integers_past_64_bits_and_odd_addresses():
    serial = 123456789012345678901234567890
    banner = StreamBanner(b'{"port": %d, "ssl": {"cert": {"serial": %d}}, "ip": 2130706433}' % (serial, serial))
    assert banner["port"] == serial and banner["ssl"]["cert"]["serial"] == serial
    assert banner.address == "2130706433"  # no ip_str or ipv6: the numeric ip
    assert StreamBanner(b'{"ip_str": ["x"], "ipv6": "::1"}').address == "::1"
    assert StreamBanner(b"{}").address == "" and StreamBanner(b"{}").port is None


@pytest.mark.parametrize("line", [b"not json", b'{"port": 1', b"[1, 2]", b'"text"', b"  "])
def test_a_line_that_is_not_a_json_object_is_a_format_error(line):
    with pytest.raises(ResponseFormatError):
        StreamBanner(line)


def test_a_member_that_cannot_be_decoded_is_a_format_error_when_first_read():
    banner = StreamBanner(b'{"port": 1, "data": "\xff"}')  # a byte that is not UTF-8
    assert banner.port == 1  # the members decoded on arrival are read
    with pytest.raises(ResponseFormatError):
        banner["data"]


def test_a_model_that_does_not_fit_is_a_format_error():
    with pytest.raises(ResponseFormatError):
        StreamBanner(b'{"port": "eighty", "timestamp": 1}').model()


def test_the_asn_stream_matches_an_asn_sent_as_a_string_or_an_int():
    from spyglass.server.stream.hub import Published, match_asn

    wanted = match_asn(["3356"])
    for asn in ("AS3356", "as3356", 3356):
        assert wanted(Published.of({"ip_str": "127.0.0.1", "port": 1, "asn": asn}))
    for odd in (True, 3356.5, ["AS3356"], None):
        assert not wanted(Published.of({"ip_str": "127.0.0.1", "port": 1, "asn": odd}))
