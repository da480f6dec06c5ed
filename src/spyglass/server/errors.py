"""Errors as the service sends them: a status code and ``{"error": "..."}``, and how routes and
the OpenAPI document declare them.

A route declares the errors of its own work with :func:`responses` (``responses=responses(402)``).
The errors every route shares are added to the document in one place, :func:`document_errors`:
400 for a route that takes parameters (validation errors are 400 here, never FastAPI's 422),
401 and 429 for a route that needs the key, 408 and 413 for every route (the key check receives
any body whole first, sent to a route that takes none too), 415 for one whose body is JSON, 503
for every route (load shedding) and 507 for one that may write (the key's, and every method but
GET). The geonet host, which takes no key and no body, keeps its 422 and declares 429 (its limits
by address) and 503 (``keyless=True``).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from spyglass.safetext import cut_said
from spyglass.server.banners.store import StoreUnavailable, TooManyValues
from spyglass.server.querystring import Utf8Query
from spyglass.server.state.sqlite.database import disk_full

log = logging.getLogger("spyglass.server")

NO_SUCH_METHOD = "No such method"
DISK_FULL = "The server's disk is full: nothing was stored. Try again once its operator has freed some space"
HTTP_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
UNEXPECTED = "Internal error: the server failed on this request and logged why"
STORE_RETRY = 5  # seconds a client is told to wait when the banner store is away (a restart takes about that)

DESCRIPTIONS = {
    400: "Invalid request: the message names the parameter and the value",
    401: "No API key, or an unknown one",
    402: "Not enough credits left this month",
    403: "The account's plan does not include this method",
    404: "No such resource",
    408: "A form carrying the key did not arrive in time: pass the key in the query",
    409: "The resource's state refuses it (e.g. past a cap with what it holds already)",
    413: "The body is too large (16 MiB; a form carrying the key: 64 KiB)",
    415: "The body's Content-Type is not the one the route takes (JSON in UTF-8, or a form)",
    429: "Too many requests for this key, or from this address where no key is taken (see Retry-After)",
    502: "A server the backend asks (e.g. the DNS server) did not answer",
    503: "The backend cannot take the request now, or a store is away (see Retry-After)",
    507: "The server's disk is full: nothing was stored",
}


class ErrorBody(BaseModel):
    error: str


# Characters of an error's message at most: one that repeated a caller's 16 MiB value, escaped,
# was 80 MiB, and ten of them at once took the server to 712 MB (attacker trial 7).
MAX_MESSAGE = 2_000


def cut_message(message: str) -> str:
    """``message`` cut to MAX_MESSAGE characters, saying how long it was."""
    return cut_said(message, MAX_MESSAGE)


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        message = cut_message(message)
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def not_found(message: str) -> ApiError:
    return ApiError(404, message)


SHOWN_ID = 64  # characters of an id a message repeats: enough to tell it, never a caller's whole 5,000


def shown_id(value: str) -> str:
    """``value`` quoted as a message names an id the caller sent, cut short if it is long."""
    return cut_said(value, SHOWN_ID, repr)


def unavailable(exc: StoreUnavailable) -> ApiError:
    """What a client is told while a store's server (banners or state) is away: 503, and when to
    try again. Which store, and nothing of its address (user, host, port, database) or of the
    driver's reason, which an unauthenticated client must not learn: they are in the log."""
    message = f"Service unavailable: {exc.what} cannot be used now. Try again shortly"
    return ApiError(503, message, {"Retry-After": str(STORE_RETRY)})


OUTAGE_LOG_EVERY = 30.0  # seconds between two log lines of one failure kind while a store is away


class _ByKind:
    """One log line per failure kind at most every ``every`` seconds: :meth:`due` says whether
    this one is to be said, and how many of its kind failed unsaid since the last line."""

    MORE = "more failed so"  # what the count on a line is of

    def __init__(self, every: float = OUTAGE_LOG_EVERY) -> None:
        self.every = every
        self._kinds: dict[str, tuple[float, int]] = {}  # kind: (when said, failed since)
        self._lock = threading.Lock()

    def due(self, kind: str) -> str | None:
        """None when this failure is only counted; else what to add to its line ("" or the count)."""
        now = time.monotonic()
        with self._lock:
            said, since = self._kinds.get(kind, (-self.every, 0))
            if now - said < self.every:
                self._kinds[kind] = (said, since + 1)
                return None
            self._kinds[kind] = (now, 0)
        return f" ({since:,} {self.MORE} in the last {now - said:.0f} s)" if since else ""

    def seen(self, kind: str) -> bool:
        return kind in self._kinds


class OutageLog(_ByKind):
    """The log of requests failed by a store that is away: one line per failure kind (the store
    and how it failed) at most every OUTAGE_LOG_EVERY seconds, with how many failed so since. A
    line per request was 4.5 MB of a backend's log in 70 s of a ClickHouse outage."""

    def __call__(self, method: str, path: str, exc: StoreUnavailable) -> None:
        cause = exc.__cause__ or exc.__context__
        kind = f"{exc.what}: {type(cause).__name__ if cause else str(exc)[:80]}"
        if (more := self.due(kind)) is not None:
            log.warning("%s %s: %s%s", method, path, exc, more)


outage_log = OutageLog()


class FailureLog(_ByKind):
    """The log of unexpected failures (bugs answered 500): the first of a kind (the exception's
    type and the line that raised it) with its traceback, then one line a kind at most every
    OUTAGE_LOG_EVERY seconds with how many failed so since. A traceback a request was a log an
    attacker could fill by repeating one bad request."""

    def __call__(self, method: str, path: str, exc: Exception) -> None:
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        kind = f"{type(exc).__name__}{where}"
        first = not self.seen(kind) and len(self._kinds) < MAX_FAILURE_KINDS
        if (more := self.due(kind)) is not None:
            log.error("unexpected error on %s %s: %s%s", method, path, kind, more, exc_info=exc if first else None)


MAX_FAILURE_KINDS = 1_000  # kinds whose first failure is logged with its traceback
failure_log = FailureLog()


class ConnectionLog(_ByKind, logging.Filter):
    """On uvicorn's ``uvicorn.error`` logger: the warnings its protocols log for one connection
    ("Invalid HTTP request received.", "Unsupported upgrade request."...), one line a kind (the
    message) at most once a minute, with how many were left out since. Unthrottled, a client that
    looped sending garbage wrote 30,000 lines (1.2 MB) of the log in 10 s."""

    MORE = "more so"

    def __init__(self, every: float = 60.0) -> None:
        _ByKind.__init__(self, every)
        logging.Filter.__init__(self)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING or f"uvicorn{os.sep}protocols{os.sep}" not in record.pathname:
            return True
        more = self.due(str(record.msg))  # uvicorn's fixed messages: few kinds
        if more:
            record.msg = f"{record.msg}{more}"
        return more is not None


connection_log = ConnectionLog()


def responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The error responses a route declares: ``@router.get(path, responses=responses(402, 404))``."""
    return {status: {"model": ErrorBody, "description": DESCRIPTIONS[status]} for status in statuses}


def allowed_methods(request: Request) -> list[str]:
    """Every method the API document lists for the request's path: Starlette's 405 names only
    those of the first route that matched the path (GET /notifier hid POST /notifier)."""
    path = request.url.path.removeprefix(request.scope.get("root_path", ""))
    found: dict[int, set[str]] = {}  # by the number of parameters: /alert/info before /alert/{id}
    for template, operations in request.app.openapi().get("paths", {}).items():
        if re.fullmatch(re.sub(r"\\{[^}/]+\\}", "[^/]+", re.escape(template)), path):
            found.setdefault(template.count("{"), set()).update(m.upper() for m in operations)
    methods = found[min(found)] & HTTP_METHODS if found else set()
    return sorted(methods)


def describe_validation(exc: RequestValidationError) -> str:
    """``Invalid request: query: Field required``: each failing field by name (its source dropped)."""
    parts = []
    for item in exc.errors():
        loc = item.get("loc", ())
        field = ".".join(str(p) for p in loc[1:]) if len(loc) > 1 else ""
        said = _PLAIN.get(item.get("type", ""), lambda _: None)(item.get("ctx") or {}) or item.get("msg")
        parts.append(f"{field}: {said}" if field else str(said))
    return cut_message("Invalid request: " + "; ".join(parts))


# pydantic's words for a bound ("Input should be less than or equal to 10000"), as a person says it
_PLAIN: dict[str, Callable[[dict], str | None]] = {
    "less_than_equal": lambda ctx: f"at most {ctx['le']:,}" if isinstance(ctx.get("le"), int) else None,
    "greater_than_equal": lambda ctx: f"at least {ctx['ge']:,}" if isinstance(ctx.get("ge"), int) else None,
    "value_error": lambda ctx: str(ctx["error"]) if ctx.get("error") else None,  # not "Value error, ..."
}


def install_error_handlers(app: FastAPI, *, validation_as_400: bool = True) -> None:
    """Every error of ``app`` answers ``{error}``; validation errors too unless the API says 422.
    A query string that is not UTF-8 is answered 400 here too, for every route."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = NO_SUCH_METHOD if exc.status_code == 404 else str(exc.detail)
        headers = getattr(exc, "headers", None)
        if exc.status_code == 405 and (allowed := allowed_methods(request)):
            headers = {**(headers or {}), "Allow": ", ".join(allowed)}
        return JSONResponse({"error": message}, status_code=exc.status_code, headers=headers)

    if validation_as_400:

        @app.exception_handler(RequestValidationError)
        async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
            return JSONResponse({"error": describe_validation(exc)}, status_code=400)

    @app.exception_handler(StoreUnavailable)
    async def _store_away(request: Request, exc: StoreUnavailable) -> JSONResponse:
        outage_log(request.method, request.url.path, exc)
        error = unavailable(exc)
        return JSONResponse({"error": error.message}, status_code=error.status, headers=error.headers)

    @app.exception_handler(TooManyValues)
    async def _too_many_values(request: Request, exc: TooManyValues) -> JSONResponse:
        return JSONResponse({"error": f"Invalid facets: {exc}"}, status_code=400)

    @app.exception_handler(ClientDisconnect)
    async def _client_gone(request: Request, exc: ClientDisconnect) -> JSONResponse:
        # Not an error (and not for the last resort below, whose traceback would fill the log):
        # the client went away while its body was being read. The answer goes to nobody.
        log.debug("%s %s: the client went away", request.method, request.url.path)
        return JSONResponse({"error": "The client went away"}, status_code=400)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # What escapes a middleware outside LastResort: Starlette re-raises it after this answer.
        return unexpected(request, exc)

    app.add_middleware(LastResort)
    app.add_middleware(Utf8Query)


def unexpected(request: Request, exc: Exception) -> JSONResponse:
    """The answer to an exception no handler took: 507 for a full disk, else a JSON 500 that
    names nothing of the failure (the log does: :data:`failure_log`)."""
    settings = getattr(request.app.state, "settings", None)
    if disk_full(exc, getattr(settings, "data_dir", None)):
        log.error("%s %s: the disk is full (%s)", request.method, request.url.path, exc)
        return JSONResponse({"error": DISK_FULL}, status_code=507)
    failure_log(request.method, request.url.path, exc)
    return JSONResponse({"error": UNEXPECTED}, status_code=500)


class LastResort:
    """ASGI middleware: an exception of a route becomes :func:`unexpected`'s answer, and goes no
    further. Starlette's own last resort answers and then re-raises, and uvicorn then logged a
    traceback for each and closed the client's kept-alive connection (issue 44: a reset after
    each 500). An answer already begun (a stream) cannot be finished: that one is re-raised, and
    closing the connection is how the client learns it is cut short."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception as exc:
            if started:
                raise
            await unexpected(Request(scope), exc)(scope, receive, send)


def document_errors(app: FastAPI, keyless: bool = False) -> None:
    """``app``'s OpenAPI document declares the errors that really occur, with the ``{error}`` body
    (``keyless``: the geonet host's, outside the key check)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        schema = app.openapi_schema
        if schema is None:
            schema = generate()  # FastAPI's document, cached on the app: amended once, in place
            for operations in schema.get("paths", {}).values():
                for method, operation in operations.items():
                    _declare(operation, [429, 503] if keyless else _shared_errors(operation, method))
            schemas = schema.setdefault("components", {}).setdefault("schemas", {})
            schemas["ErrorBody"] = ErrorBody.model_json_schema()
            for unused in ("HTTPValidationError", "ValidationError"):
                schemas.pop(unused, None)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
    _serve_document_encoded_once(app)


def _serve_document_encoded_once(app: FastAPI) -> None:
    """``/openapi.json`` answered with its bytes made once: FastAPI encoded its 159 KB for every
    request, and a keyless flood of it took another account's p95 to 1.09 s (attacker trial 8)."""
    encoded: list[bytes] = []
    routes = app.router.routes
    for i, route in enumerate(routes):
        if isinstance(route, Route) and route.path == app.openapi_url:
            made = route.endpoint  # FastAPI's: it names the mount's path (root_path) among the servers

            async def document(request: Request, made: Callable = made) -> Response:
                if not encoded:  # (the app is whole by the first ask)
                    encoded.append(bytes((await made(request)).body))
                return Response(encoded[0], media_type="application/json")

            routes[i] = Route(route.path, document, include_in_schema=False)


def _shared_errors(operation: dict[str, Any], method: str) -> list[int]:
    shared = []
    if (
        operation.get("responses", {}).pop("422", None) is not None
    ):  # FastAPI adds it exactly when a route takes parameters
        shared.append(400)
    if operation.get("security"):
        shared += [401, 429]
    shared += [408, 413]
    if operation.get("requestBody", {}).get("content"):  # a body of another type than the route takes
        shared.append(415)
    shared.append(503)
    if operation.get("security") or method != "get":
        shared.append(507)
    return shared


def _declare(operation: dict[str, Any], statuses: list[int]) -> None:
    answers = operation.setdefault("responses", {})
    for status in statuses:
        answers.setdefault(
            str(status),
            {
                "description": DESCRIPTIONS[status],
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
            },
        )
