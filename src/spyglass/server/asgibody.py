"""A request's body and a JSON answer, read and written in ASGI middleware (which has no Request
or Response to do it): what the key check before a body (auth.py), the guard (guard.py) and the
readers' proxy (workers.py) share. Below them all: it imports nothing of the server.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from starlette.types import Message, Receive, Send


def has_body(scope) -> bool:
    """Whether the request says a body follows (a length above 0, or chunks)."""
    for name, value in scope["headers"]:
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() not in (b"", b"0")):
            return True
    return False


def declared_length(scope) -> int:
    """The request's Content-Length (0 when it names none or a bad one)."""
    value = next((v for k, v in scope["headers"] if k == b"content-length"), b"")
    return int(value) if value.strip().isdigit() else 0


class BodyTooLarge(Exception):
    """The request's body is longer than its receiver takes."""


async def receive_body(receive: Receive, most: int) -> list[bytes] | None:
    """The request's body, in the chunks it came in; None if its client went away first. Past
    ``most`` bytes, :class:`BodyTooLarge` (read no further: memory is not the sender's to fill)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > most:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body"):
            return chunks


def replaying(chunks: Iterable[bytes], receive: Receive) -> Receive:
    """An ASGI ``receive`` that gives ``chunks`` as the request's body, then what ``receive`` gives
    (the client's disconnect)."""
    pending = deque(chunks)

    async def replay() -> Message:
        if pending:
            return {"type": "http.request", "body": pending.popleft(), "more_body": bool(pending)}
        return await receive()

    return replay


async def send_json(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    """A whole JSON answer from ASGI middleware (which has no Response to make it)."""
    start = {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), *headers],
    }
    await send(start)
    await send({"type": "http.response.body", "body": body})
