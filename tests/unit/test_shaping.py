"""Banners as the API serves them (server/shaping.py): the stored bytes as they are where nothing
changes, the shaped banner where something does."""

from __future__ import annotations

import json

from spyglass.server.shaping import served


def body(**members) -> bytes:
    banner = {"ip_str": "198.18.0.1", "port": 80, "transport": "tcp", "timestamp": "2026-01-01T00:00:00", **members}
    return json.dumps(banner).encode()


def test_the_stored_bytes_are_sent_as_they_are_when_nothing_changes():
    stored = body(_intel={"id": "x"}, http={"title": "t"}, serial=2**80, z=1.0)
    assert served(stored, "intel", minify=True) is stored


def test_minify_drops_the_page_the_chain_and_raw_options():
    stored = body(_intel={}, http={"html": "<p>", "title": "t"}, ssl={"chain": ["x"], "cert": {}}, opts={"raw": "r"})
    assert json.loads(served(stored, "intel", minify=True)) == {
        **json.loads(stored),
        "http": {"title": "t"},
        "ssl": {"cert": {}},
        "opts": {},
    }
    assert served(stored, "intel", minify=False) is stored


def test_the_crawler_member_takes_the_namespace_and_ip_str_is_added():
    stored = json.dumps(
        {"ipv6": "2001:db8::1", "port": 22, "timestamp": "2026-01-01T00:00:00", "_shodan": {"module": "ssh"}}
    ).encode()
    shown = json.loads(served(stored, "intel", minify=True))
    assert "_shodan" not in shown and shown["_intel"] == {"module": "ssh"} and shown["ip_str"] == "2001:db8::1"


def test_a_member_named_like_the_namespace_deeper_down_is_not_taken_for_it():
    stored = body(_shodan={"crawler": "x"}, data={"_intel": 1, "ip_str": "no"})
    shown = json.loads(served(stored, "intel", minify=False))
    assert shown["_intel"] == {"crawler": "x"} and "_shodan" not in shown


def test_bytes_msgspec_refuses_are_served_the_long_way():
    stored = b'{"ip_str":"198.18.0.1","port":1,"timestamp":"2026-01-01T00:00:00","_intel":{},"data":"\\ud800"}'
    assert json.loads(served(stored, "intel", minify=True))["data"] == "\ud800"


def test_minify_writes_every_value_it_keeps_as_the_bytes_it_was():
    stored = (
        b'{"ip_str":"198.18.0.1","port":80,"timestamp":"2026-01-01T00:00:00","_intel":{},"z":1E2,'
        b'"http":{"n":1.50, "html":"<p>","serial":123456789012345678901234567890},"ssl":["chain"]}'
    )
    assert served(stored, "intel", minify=True) == (
        b'{"ip_str":"198.18.0.1","port":80,"timestamp":"2026-01-01T00:00:00","_intel":{},"z":1E2,'
        b'"http":{"n":1.50,"serial":123456789012345678901234567890},"ssl":["chain"]}'
    )
