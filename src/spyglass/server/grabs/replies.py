"""Line-based replies of FTP and SMTP (``220-...`` continued, ``220 ...`` final). Safe on anything."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Conn

_FINAL = re.compile(rb"(?:^|\n)(\d{3})(?: [^\n]*)?\r?\n", re.S)


def done(buf: bytes) -> bool:
    """Whether ``buf`` holds a whole reply: a line of a code followed by a space (or nothing)."""
    return _FINAL.search(buf) is not None


def first_reply(buf: bytes) -> bytes:
    """The first whole reply in ``buf`` (or all of it when none is whole)."""
    m = _FINAL.search(buf)
    return buf[: m.end()] if m else buf


def code(reply: bytes) -> int | None:
    m = _FINAL.search(reply)
    return int(m.group(1)) if m else None


def lines(reply: bytes) -> list[str]:
    """The reply's text lines without their codes (``250-SIZE 1000`` -> ``SIZE 1000``)."""
    out = []
    for raw in reply.decode("utf-8", "replace").splitlines():
        out.append(raw[4:] if len(raw) >= 3 and raw[:3].isdigit() and raw[3:4] in ("-", " ", "") else raw)
    return out


def text(reply: bytes) -> str:
    return reply.decode("utf-8", "replace")


async def read(conn: Conn) -> bytes:
    """The next whole reply on ``conn`` (what came after it waits for the next read)."""
    raw = await conn.read_until(done)
    reply = first_reply(raw)
    conn.pending = raw[len(reply) :]
    return reply


class Dialogue:
    """Commands and their replies on ``conn`` after the server's greeting, every reply kept in
    order: the banner's ``data`` is the whole transcript."""

    def __init__(self, conn: Conn, greeting: bytes) -> None:
        self.conn = conn
        self.replies = [greeting]

    async def ask(self, command: bytes) -> bytes:
        """Send one command line and read its reply (empty when the connection is gone)."""
        if not await self.conn.send(command + b"\r\n"):
            return b""
        reply = await read(self.conn)
        self.replies.append(reply)
        return reply

    def transcript(self) -> str:
        return "".join(text(r) for r in self.replies)
