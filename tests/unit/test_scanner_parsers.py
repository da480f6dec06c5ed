"""The scanner's parsers on arbitrary bytes: they never raise, and they read well-formed input right."""

from __future__ import annotations

import asyncio
import struct

from hypothesis import given
from hypothesis import strategies as st

from spyglass.server.grabs import httpparse, redis, replies, sshparse
from spyglass.server.scanner.probe import by_answer, by_greeting

junk = st.binary(max_size=2048)
texts = st.text(max_size=300)


@given(junk)
def test_http_parsers_never_raise(raw):
    resp = httpparse.parse(raw)
    httpparse.complete(raw)
    httpparse.dechunk(raw)
    if resp is not None:
        assert 100 <= resp.status <= 999
        resp.text()
        resp.header("content-type")


latin1_values = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF, blacklist_characters="\x7f"), max_size=60)


@given(st.binary(max_size=200), st.lists(st.tuples(st.from_regex(r"[A-Za-z-]{1,12}", fullmatch=True), latin1_values)))
def test_http_parse_well_formed(body, headers):
    clean = [(k, v.strip(" \t")) for k, v in headers if k.lower() not in ("content-length", "transfer-encoding")]
    head = (
        "HTTP/1.1 203 Whatever\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in clean)
        + f"Content-Length: {len(body)}\r\n\r\n"
    )
    raw = head.encode("latin-1") + body + b"trailing junk"
    resp = httpparse.parse(raw)
    assert resp is not None and resp.status == 203 and resp.body == body and resp.head == head
    assert httpparse.complete(raw)
    assert resp.headers[: len(clean)] == clean


@given(st.lists(st.binary(min_size=1, max_size=50), max_size=8))
def test_dechunk_round_trip(chunks):
    encoded = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"
    assert httpparse.dechunk(encoded) == b"".join(chunks)


@given(texts)
def test_title_and_icon_never_raise(page):
    title = httpparse.title(page)
    assert title is None or len(title) <= httpparse.MAX_TITLE
    httpparse.icon_href(page)
    httpparse.server_product(page)


@given(st.text(alphabet=st.characters(blacklist_characters="<>&", blacklist_categories=["Cs"]), max_size=100))
def test_title_extracted(title):
    page = f"<html><head><TITLE lang=en>{title}</title></head></html>"
    assert httpparse.title(page) == " ".join(title.split())


def test_icon_and_server_examples():
    assert httpparse.icon_href('<link href="/f.ico" rel="shortcut icon">') == "/f.ico"
    assert httpparse.icon_href("<link rel=stylesheet href=/a.css><link rel='icon' href='x.png'>") == "x.png"
    assert httpparse.server_product("nginx/1.24.0") == ("nginx", "1.24.0", "f5:nginx")
    assert httpparse.server_product("Microsoft-IIS/10.0") == (
        "Microsoft IIS httpd",
        "10.0",
        "microsoft:internet_information_services",
    )
    assert httpparse.server_product("Jetty(9.4.43.v20210629)") == ("Jetty", "9.4.43.v20210629", "eclipse:jetty")
    assert httpparse.server_product("cloudflare") == ("cloudflare", None, None)
    assert httpparse.server_product("") is None


@given(junk)
def test_reply_parsers_never_raise(raw):
    replies.done(raw)
    replies.code(raw)
    replies.lines(raw)
    first = replies.first_reply(raw)
    assert raw.startswith(first)


def test_replies_examples():
    ehlo = b"250-mail.test Hello\r\n250-SIZE 1000\r\n250 STARTTLS\r\n220 next"
    assert replies.done(ehlo) and replies.code(ehlo) == 250
    assert replies.first_reply(ehlo) == ehlo[: -len(b"220 next")]
    assert replies.lines(replies.first_reply(ehlo)) == ["mail.test Hello", "SIZE 1000", "STARTTLS"]
    assert not replies.done(b"250-partial\r\n250-more")


@given(junk)
def test_ssh_parsers_never_raise(raw):
    sshparse.version_line(raw)
    payload = sshparse.packet(raw)
    sshparse.kexinit(raw)
    if payload is not None:
        sshparse.kexinit(payload)
    version = raw.decode("utf-8", "replace")
    sshparse.product(version)


name_lists = st.lists(
    st.lists(st.from_regex(r"[a-z0-9@.\-]{1,20}", fullmatch=True), max_size=5), min_size=10, max_size=10
)


@given(name_lists, st.integers(4, 20))
def test_kexinit_round_trip(lists, padding):
    payload = bytes([20]) + b"\0" * 16
    for names in lists:
        joined = ",".join(names).encode()
        payload += struct.pack(">I", len(joined)) + joined
    payload += b"\0" + b"\0\0\0\0"
    pkt = struct.pack(">IB", 1 + len(payload) + padding, padding) + payload + b"\0" * padding
    assert sshparse.packet(pkt + b"more") == payload
    parsed = sshparse.kexinit(payload)
    assert parsed == dict(zip(sshparse.NAME_LISTS, lists, strict=True))


def test_ssh_product_examples():
    assert sshparse.product("SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.6") == ("OpenSSH", "8.9p1", "openbsd:openssh")
    assert sshparse.product("SSH-2.0-dropbear_2022.83") == (
        "Dropbear sshd",
        "2022.83",
        "dropbear_ssh_project:dropbear_ssh",
    )
    assert sshparse.product("SSH-2.0-") is None
    assert sshparse.product("SSH-2.0-Cisco-1.25") == ("Cisco", "1.25", None)


@given(junk)
def test_redis_parsers_never_raise(raw):
    redis.reply(raw)
    redis.complete(raw)
    redis.sections(raw.decode("utf-8", "replace"))


@given(st.text(max_size=500))
def test_redis_bulk_round_trip(info):
    body = info.encode()
    raw = b"$%d\r\n%s\r\n" % (len(body), body)
    assert redis.complete(raw) and not redis.complete(raw[: len(raw) - 3])
    assert redis.reply(raw) == ("$", info)


@given(junk)
def test_sniff_classifiers_never_raise(raw):
    assert by_greeting(raw) in (None, "ssh", "ftp", "smtp")
    assert by_answer(raw) in (None, "http", "redis", "https")


@given(st.lists(st.tuples(st.integers(100, 599), st.lists(st.from_regex(r"[ -~]{0,20}", fullmatch=True), max_size=3))))
async def test_replies_read_one_at_a_time(items):
    """Replies that arrive together (pipelined, or in one packet) are still read one by one."""
    from spyglass.server.grabs.base import Conn

    wire = [
        b"".join(b"%d-%s\r\n" % (code, line.encode()) for line in more) + b"%d last\r\n" % code for code, more in items
    ]
    reader = asyncio.StreamReader()
    reader.feed_data(b"".join(wire))
    reader.feed_eof()
    conn = Conn(reader, None, 5.0)  # type: ignore[arg-type]  # only read here
    assert [await replies.read(conn) for _ in wire] == wire
    assert await replies.read(conn) == b""
