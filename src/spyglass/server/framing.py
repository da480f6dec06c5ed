"""What no client sends and a request is refused for before anything reads it: more query
parameters or headers than anyone sends (15,000 were parsed by each layer: attacker trial 6), and
both Content-Length and Transfer-Encoding (RFC 9112 6.3: read as chunked, the connection then
kept for a request behind it, which a proxy that trusted Content-Length never saw: trial 7). And
what names nothing: a value in the path that holds a slash."""

from __future__ import annotations

from starlette.types import Scope

MAX_PARAMETERS = MAX_HEADERS = 256  # a request's query parameters and headers, at most (400 and 431 past them)


def refused_framing(scope: Scope) -> tuple[int, str] | None:
    """The status and message a request is refused with (its connection closed after), or None."""
    if scope["query_string"].count(b"&") >= MAX_PARAMETERS:
        return 400, f"Invalid request: more than {MAX_PARAMETERS} query parameters"
    headers = scope["headers"]
    if len(headers) > MAX_HEADERS:
        return 431, f"More than {MAX_HEADERS} request headers"
    names = {name for name, _ in headers}
    if b"content-length" in names and b"transfer-encoding" in names:
        return 400, "Invalid request: both Content-Length and Transfer-Encoding (send one)"
    return None


# The server decodes %2F before it routes: `scan status a/b` asked for /intel/scan/a/b, answered "No
# such method" (the CLI then asked whether the server was one at all) or as dataset "a" (trial 11).
VALUE_WITH_A_SLASH = "No such resource: a value in the path holds '/' (%2F), which no id, name or address does"


def names_nothing(scope: Scope) -> str | None:
    """Why a request's path can name nothing (a 404), or None. The stream's filters take the rest
    of the path whatever it holds, and refuse a slash as the value it is (a 400 naming the filter)."""
    raw = scope.get("raw_path") or b""
    return VALUE_WITH_A_SLASH if b"%2f" in raw.lower() and not scope["path"].startswith("/stream/") else None
