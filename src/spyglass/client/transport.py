"""The transport core every host's client shares.

It adds the key, puts a timeout on every call, paces requests, retries what is safe to repeat,
turns every failure into one of the errors in :mod:`spyglass.client.errors`, and records what
responses say about credits.
"""

from __future__ import annotations

import asyncio
import email.utils
import html
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from spyglass import __version__
from spyglass.backoff import Backoff
from spyglass.client import errors
from spyglass.client.ratelimit import RateLimiter
from spyglass.secrets import mask_key, redact

log = logging.getLogger("spyglass.client")

RETRY_STATUSES = frozenset({429, 502, 503, 504})
MAX_MESSAGE = 300
USER_AGENT = f"spyglass/{__version__}"
# Idle pooled connections are dropped sooner than servers close them (uvicorn: 5 s, as httpx's
# own default), so that a request seldom goes out on one the server is closing that instant.
KEEPALIVE_EXPIRY = 2.0


class _RedactKeys(logging.Filter):
    """httpx logs every request URL at INFO, key included: mask it before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(str(record.getMessage()))
        record.args = ()
        return True


for _name in ("httpx", "httpcore", "spyglass.client"):
    logging.getLogger(_name).addFilter(_RedactKeys())


@dataclass
class Credits:
    """The latest credit balances the server reported, without extra calls.

    Listeners are called with this object whenever a balance changes.
    """

    query: int | None = None
    scan: int | None = None
    monitored_ips: int | None = None
    plan: str | None = None
    listeners: list[Callable[[Credits], None]] = field(default_factory=list, repr=False)

    def update(self, **values: Any) -> None:
        changed = False
        for name, value in values.items():
            if value is not None and getattr(self, name) != value:
                setattr(self, name, value)
                changed = True
        if changed:
            for listener in list(self.listeners):
                listener(self)

    def from_headers(self, headers: httpx.Headers) -> None:
        def num(name: str) -> int | None:
            raw = headers.get(name)
            return int(raw) if raw is not None and raw.lstrip("-").isdigit() else None

        self.update(query=num("x-query-credits"), scan=num("x-scan-credits"))


@dataclass
class Reachability:
    """Whether the last call reached the server: an answer of any status counts as reached.

    Listeners are called with this object when it changes, so a UI can show a dropped
    connection at once rather than at its next health check.
    """

    reachable: bool | None = None
    problem: str = ""
    ever: bool = False  # whether any call has reached it (a command that failed before: nothing done)
    listeners: list[Callable[[Reachability], None]] = field(default_factory=list, repr=False)

    def _set(self, reachable: bool, problem: str) -> None:
        if (self.reachable, self.problem) != (reachable, problem):
            self.reachable, self.problem = reachable, problem
            for listener in list(self.listeners):
                listener(self)

    def reached(self) -> None:
        self.ever = True
        self._set(True, "")

    def lost(self, problem: str) -> None:
        self._set(False, problem)


@dataclass
class RetryPolicy:
    attempts: int = 4  # one try plus three retries
    base: float = 0.5  # seconds; doubled per retry, with full jitter
    cap: float = 30.0  # no single wait longer than this
    max_retry_after: float = 120.0  # a longer Retry-After is an error, not a silent wait

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """The wait after try ``attempt`` (from 0) failed."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        return Backoff(self.base, self.cap, jitter=1.0).delay(attempt + 1)


def parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_TAG = re.compile(r"<[^>]+>")
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)
_H1 = re.compile(r"<h1[^>]*>(.*?)</h1>", re.I | re.S)


def _text_of_html(body: str) -> str:
    for pattern in (_TITLE, _H1):
        found = pattern.search(body)
        if found:
            return html.unescape(_TAG.sub("", found.group(1)))
    return html.unescape(_TAG.sub(" ", body))


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def _validation_details(detail: list) -> str:
    parts = []
    for item in detail:
        if isinstance(item, dict):
            loc = ".".join(str(p) for p in item.get("loc", []) if p not in ("query", "path", "body"))
            parts.append(f"{loc}: {item.get('msg', 'invalid')}" if loc else str(item.get("msg")))
    return "; ".join(parts) or "invalid request"


def error_from_response(response: httpx.Response, key: str | None) -> errors.APIError:
    """Build the typed error for a non-2xx response, with a readable, key-free message."""
    status = response.status_code
    reason = response.reason_phrase or "error"
    details: list[dict] = []
    text = response.text
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        message = body["error"]
    elif isinstance(body, dict) and isinstance(body.get("detail"), list):
        details = [d for d in body["detail"] if isinstance(d, dict)]
        message = _validation_details(body["detail"])
    elif isinstance(body, dict) and isinstance(body.get("detail"), str):
        message = body["detail"]
    elif "html" in response.headers.get("content-type", "") or text.lstrip().startswith("<"):
        message = _text_of_html(text) or reason
    else:
        message = text or reason
    message = _shorten(redact(f"{message} (HTTP {status})", key))
    cls = errors.error_class_for(status)
    if cls is errors.RateLimited:
        return errors.RateLimited(message, status, parse_retry_after(response.headers.get("retry-after")))
    return cls(message, status, details)


class Transport:
    """One host: base URL, key, timeouts, pacing, retries and error mapping."""

    def __init__(
        self,
        base_url: str,
        key: str | None = None,
        *,
        timeout: float = 30.0,
        rate_limiter: RateLimiter | None = None,
        retry: RetryPolicy | None = None,
        credits: Credits | None = None,
        reachability: Reachability | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._key = key
        self.timeout = timeout
        self.rate_limiter = rate_limiter
        self.retry = retry or RetryPolicy()
        self.credits = credits if credits is not None else Credits()
        self.reachability = reachability if reachability is not None else Reachability()
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            headers={"User-Agent": USER_AGENT},
            transport=http_transport,
            follow_redirects=False,
            limits=httpx.Limits(keepalive_expiry=KEEPALIVE_EXPIRY),
        )

    def __repr__(self) -> str:
        return f"Transport({self.base_url!r}, key={mask_key(self._key)})"

    def move_to(self, base_url: str) -> None:
        """The host answers at ``base_url`` from now on (an embedded backend started again
        elsewhere); calls under way keep the connection they have."""
        self.base_url = base_url.rstrip("/")
        self._http.base_url = httpx.URL(self.base_url)

    @property
    def has_key(self) -> bool:
        return bool(self._key)

    async def aclose(self) -> None:
        await self._http.aclose()

    def _params(self, params: dict[str, Any] | None) -> dict[str, Any]:
        out = {k: _param_value(v) for k, v in (params or {}).items() if v is not None}
        if self._key:
            out["key"] = self._key
        return out

    def transport_error(self, exc: httpx.TransportError) -> errors.TransportError:
        where = self.base_url
        if isinstance(exc, httpx.ConnectTimeout):
            return errors.RequestTimeout(f"Timed out connecting to {where}")
        if isinstance(exc, httpx.TimeoutException):
            return errors.RequestTimeout(f"{where} did not answer within {self.timeout:g} s")
        if isinstance(exc, httpx.ConnectError):
            return errors.ConnectFailed(
                f"Cannot connect to {where}: {_shorten(redact(str(exc) or 'refused', self._key))}"
            )
        return errors.ConnectionDropped(
            f"Connection to {where} dropped: {_shorten(redact(str(exc) or type(exc).__name__, self._key))}"
        )

    async def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """Send one call and return its decoded JSON body (see :meth:`exchange`)."""
        body, _ = await self.exchange(method, path, **kwargs)
        return body

    async def exchange(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        data: dict[str, Any] | None = None,
        content: bytes | None = None,
        idempotent: bool | None = None,
    ) -> tuple[Any, httpx.Headers]:
        """Send one call; return its decoded JSON body and the response headers.

        ``idempotent`` says whether the call may be repeated after it might have reached the
        server (default: GET, PUT and DELETE). A call that is not (one that spends credits or
        creates something) is retried only when the server provably did not act on it: a 429,
        or a connection that was never made.
        """
        if idempotent is None:
            idempotent = method in ("GET", "PUT", "DELETE")
        attempt, stale_retried = 0, False
        while True:
            if self.rate_limiter is not None:
                await self.rate_limiter.acquire()
            trace = _Trace()
            try:
                response = await self._http.request(
                    method,
                    path,
                    params=self._params(params),
                    json=json,
                    data=data,
                    content=content,
                    extensions={"trace": trace},
                )
            except httpx.TransportError as exc:
                if trace.closed_unanswered(exc) and not stale_retried:
                    stale_retried = True  # at once, on a new connection: the closed one has left the pool
                    log.info("retrying on a new connection: %s", exc)
                    continue
                error = self.transport_error(exc)
                never_sent = isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))
                if (idempotent or never_sent) and attempt + 1 < self.retry.attempts:
                    await self._backoff(attempt, None, error)
                    attempt += 1
                    continue
                self.reachability.lost(str(error))
                raise error from None
            self.reachability.reached()
            self.credits.from_headers(response.headers)
            if response.is_success:
                return self._decode(response), response.headers
            refused = error_from_response(response, self._key)
            retryable = response.status_code == 429 or (idempotent and response.status_code in RETRY_STATUSES)
            retry_after = getattr(refused, "retry_after", None)
            too_long = retry_after is not None and retry_after > self.retry.max_retry_after
            if retryable and not too_long and attempt + 1 < self.retry.attempts:
                await self._backoff(attempt, retry_after, refused)
                attempt += 1
                continue
            raise refused

    async def _backoff(self, attempt: int, retry_after: float | None, error: Exception) -> None:
        wait = self.retry.delay(attempt, retry_after)
        log.info("retrying after %.2f s: %s", wait, error)
        await asyncio.sleep(wait)

    def _decode(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError:
            kind = response.headers.get("content-type", "no content type")
            raise errors.ResponseFormatError(
                f"{self.base_url} answered HTTP {response.status_code} with a body that is not JSON ({kind})"
            ) from None

    async def open_stream(
        self, path: str, params: dict[str, Any] | None = None, read_timeout: float | None = 90.0
    ) -> httpx.Response:
        """A streaming GET (for the stream host), its headers read: the caller iterates its body and
        must ``aclose()`` it. (A response, not a context manager: an async generator that holds
        one and is abandoned mid-iteration is closed by the garbage collector, racing the context
        manager's own generator.)"""
        timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0), read=read_timeout)
        request = self._http.build_request("GET", path, params=self._params(params), timeout=timeout)
        return await self._http.send(request, stream=True)

    def download_stream(self, url: str, headers: dict[str, str] | None = None, read_timeout: float | None = 60.0):
        """An open streaming GET of a file at ``url`` (a path, or an absolute URL such as a
        dataset file's). The key goes only to this transport's own host, never to another."""
        target, base = httpx.URL(url), httpx.URL(self.base_url)
        own = not target.is_absolute_url or (target.scheme, target.host, target.port) == (
            base.scheme,
            base.host,
            base.port,
        )
        params = self._params(None) if own else {}
        timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0), read=read_timeout)
        return self._http.stream("GET", url, params=params, headers=headers, timeout=timeout)


class _Trace:
    """What httpcore reports of one request: whether it opened a connection of its own and whether
    a response began, to tell a pooled connection the server had closed from a dropped call."""

    def __init__(self) -> None:
        self.events: set[str] = set()

    async def __call__(self, name: str, info: dict[str, Any]) -> None:
        self.events.add(name)

    def closed_unanswered(self, exc: Exception) -> bool:
        """A reused idle connection ended before any answer: the server closed it as idle as the
        request went out (an end of stream, "Server disconnected without sending a response", or a
        reset where the request met the closed socket), so even a call that spends credits was not
        acted on and is safe to send again."""
        sent = "http11.send_request_headers.started" in self.events  # (a mock transport sends none)
        reused = sent and not any(name.startswith("connection.connect_") for name in self.events)
        answered = "http11.receive_response_headers.complete" in self.events
        ended = isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError))
        return ended and reused and not answered


def _param_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, set)):
        return ",".join(str(v) for v in value)
    return value
