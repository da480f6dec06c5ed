"""A query string's text must be UTF-8: Starlette decodes it with ``errors="replace"``, so
``query=%ff%fe`` reached a route as two U+FFFD and was answered 200. Checked once, in ASGI
middleware every app installs (errors.install_error_handlers), not by each route."""

from __future__ import annotations

import json
from urllib.parse import unquote_to_bytes

from starlette.types import ASGIApp, Receive, Scope, Send

from spyglass.server.asgibody import send_json

SHOWN_NAME = 64  # characters of a parameter's name the message repeats


def not_utf8(query: bytes) -> str | None:
    """What of ``query`` (raw, as in the scope) is not UTF-8 once percent-decoded: the parameter
    it names, as the 400 says it; None when every name and value is."""
    if query.isascii() and b"%" not in query:
        return None  # nothing encoded: every byte is ASCII
    for part in query.split(b"&"):
        name, _, value = part.partition(b"=")
        try:
            shown = unquote_to_bytes(name.replace(b"+", b" ")).decode()
        except UnicodeDecodeError:
            return "a parameter's name"
        try:
            unquote_to_bytes(value.replace(b"+", b" ")).decode()
        except UnicodeDecodeError:
            return shown[:SHOWN_NAME] or "a parameter with no name"
    return None


class Utf8Query:
    """ASGI middleware: a request whose query string is not UTF-8 is answered 400, naming the
    parameter, before any route (or key check) reads it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (bad := not_utf8(scope.get("query_string", b""))):
            message = f"Invalid request: {bad}: not UTF-8 (percent-encode the UTF-8 bytes of its text)"
            await send_json(send, 400, json.dumps({"error": message}).encode(), [])
            return
        await self.app(scope, receive, send)
