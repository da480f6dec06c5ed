"""Redis: the INFO sections. A service that wants a password is recorded with its error reply."""

from __future__ import annotations

from .base import MAX_READ, Conn, Found, Target, cpe_members

INFO = b"*1\r\n$4\r\nINFO\r\n"


def reply(buf: bytes) -> tuple[str, str] | None:
    """A RESP reply as (kind, text): kind is ``+``, ``-``, ``:`` or ``$`` (a bulk string, maybe cut
    at the read limit); None when ``buf`` does not start a whole RESP reply."""
    eol = buf.find(b"\r\n")
    if eol < 1 or buf[:1] not in (b"+", b"-", b":", b"$", b"*"):
        return None
    kind, head = buf[:1].decode(), buf[1:eol].decode("latin-1")
    if kind != "$":
        return kind, head
    try:
        size = int(head)
    except ValueError:
        return None
    if size < 0:
        return "$", ""
    body = buf[eol + 2 : eol + 2 + size]
    return "$", body.decode("utf-8", "replace")


def complete(buf: bytes) -> bool:
    r = reply(buf)
    if r is None:
        return b"\r\n" in buf
    if r[0] != "$":
        return True
    eol = buf.find(b"\r\n")
    try:
        return len(buf) >= eol + 2 + int(buf[1:eol])
    except ValueError:
        return True


def sections(info: str) -> dict[str, dict[str, str]]:
    """INFO text as {section: {field: value}} (``# Server`` -> ``server``)."""
    out: dict[str, dict[str, str]] = {}
    current = out.setdefault("server", {})
    for line in info.splitlines():
        line = line.strip()
        if line.startswith("#"):
            current = out.setdefault(line.lstrip("# ").lower() or "server", {})
        elif ":" in line:
            key, _, value = line.partition(":")
            current[key] = value
    return {name: fields for name, fields in out.items() if fields}


async def grab(t: Target) -> Found | None:
    conn = await Conn.open(t)
    try:
        await conn.send(INFO)
        parsed = reply(await conn.read_until(complete, MAX_READ))
    finally:
        await conn.close()
    if parsed is None or parsed[0] not in ("$", "-"):  # "+OK ..." is a POP3 greeting more likely than Redis
        return None
    kind, text = parsed
    if kind != "$":  # -NOAUTH, -ERR: a Redis that says no
        return Found("redis", f"{kind}{text}\r\n", {"product": "Redis key-value store"})
    info = sections(text)
    version = info.get("server", {}).get("redis_version")
    members: dict = {"redis": info, **cpe_members("Redis key-value store", version, "redis:redis")}
    return Found("redis", text, members)
