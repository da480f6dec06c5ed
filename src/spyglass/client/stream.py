"""Client of the real-time stream host (``{stream_url}``).

Each method returns a :class:`Stream`: an async iterator of banners (each a
:class:`StreamBanner`, a read-only mapping decoded as it is read; with ``raw=True`` the bytes of
each banner's JSON, unparsed) and :class:`StreamDebug` events. Use it as ``async with ... as stream`` (or call
``aclose``) when leaving the loop early, so its connection closes at once. By default it is
resilient: when the connection drops, fails, or stays silent past ``silence`` seconds (the
server sends a keep-alive well within it), it reconnects with exponential backoff and jitter,
and says so through :attr:`Stream.state` and the ``on_state`` callback (connected, reconnecting
in N s, the gap of time it missed). Errors the server answers on purpose (a 4xx other than 429:
no key, not an enterprise plan, a bad filter) are raised: retrying cannot fix them.

Parsing is the hot path (the firehose is thousands of banners a second): see
:mod:`spyglass.client.streamparse`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import httpx

from spyglass.backoff import Backoff
from spyglass.client import errors
from spyglass.client.base import HostClient, csv, segment
from spyglass.client.errors import ResponseFormatError
from spyglass.client.streamparse import JsonLines, SseParser, StreamBanner, loads
from spyglass.client.transport import Transport, error_from_response

SILENCE = 45.0  # seconds without a byte (data or keep-alive) before the connection counts as dead
RECONNECT = Backoff(base=0.5, cap=30.0, jitter=0.5)  # waits before each reconnection after a drop


@dataclass(frozen=True)
class StreamDebug:
    """The server discarded ``discarded`` messages because this reader fell behind."""

    discarded: int


@dataclass(frozen=True)
class StreamState:
    """What the stream's connection is doing, for a status line."""

    status: str  # "connecting", "connected", "reconnecting" or "closed"
    retry_in: float = 0.0  # reconnecting: seconds until the next attempt
    retry_at: float = 0.0  # reconnecting: time.monotonic() of the next attempt (for a countdown)
    gap: float = 0.0  # connected after a drop: seconds from the last byte received to the reconnection
    attempt: int = 0  # reconnecting: attempts since the drop
    reason: str = ""  # reconnecting or closed: why


StreamItem = StreamBanner | StreamDebug
RawItem = bytes | StreamDebug


class Stream:
    """One followed stream: ``async for item in stream``; :attr:`state` says how its connection is."""

    def __init__(
        self,
        client: StreamClient,
        path: str,
        *,
        fmt: str = "json",
        debug: bool = False,
        raw: bool = False,
        reconnect: bool = True,
        silence: float = SILENCE,
        backoff: Backoff | None = None,
        on_state: Callable[[StreamState], None] | None = None,
    ) -> None:
        if fmt not in ("json", "sse"):
            raise ValueError("fmt is 'json' or 'sse'")
        self.client = client
        self.path = path
        self.fmt, self.debug, self.raw, self.reconnect = fmt, debug, raw, reconnect
        self.silence = silence
        self.backoff = backoff or RECONNECT
        self.on_state = on_state
        self.state = StreamState("connecting")
        self.received = 0  # banners
        self.discarded = 0  # as the server's debug events reported them
        self.reconnects = 0
        self._items = self._run()

    def __aiter__(self) -> AsyncGenerator[Any, None]:
        return self._items  # the generator itself: one step less per item on the hot path

    async def __aenter__(self) -> Stream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def __anext__(self) -> Any:
        return await self._items.__anext__()

    async def aclose(self) -> None:
        await self._items.aclose()

    def _set(self, state: StreamState) -> None:
        self.state = state
        if self.on_state is not None:
            self.on_state(state)

    async def _run(self) -> AsyncGenerator[Any, None]:
        transport = self.client.transport
        params = {"t": self.fmt, "debug": 1 if self.debug else None}
        attempt = 0
        last_byte: float | None = None  # monotonic time of the last byte of the previous connection
        try:
            while True:
                reason = "the server ended the stream"
                try:
                    response = await transport.open_stream(self.client.ns(self.path), params, self.silence)
                    chunks = cast(AsyncGenerator[bytes, None], response.aiter_bytes())  # it is one
                    try:
                        if not response.is_success:
                            await response.aread()
                            error = error_from_response(response, None)
                            if not self.reconnect or not retryable(error):
                                raise error
                            raise _Retry(str(error))
                        gap = time.monotonic() - last_byte if last_byte is not None else 0.0
                        self._set(StreamState("connected", gap=gap))
                        attempt = 0
                        last_byte = time.monotonic()
                        parser = SseParser() if self.fmt == "sse" else JsonLines()
                        async for chunk in chunks:
                            last_byte = time.monotonic()
                            for line in parser.feed(chunk):
                                yield self._item(line)
                    finally:  # in order, by this generator, even when it is closed mid-iteration
                        await chunks.aclose()
                        await response.aclose()
                except _Retry as retry:
                    reason = str(retry)
                except httpx.TransportError as exc:
                    dropped = transport.transport_error(exc)
                    if not self.reconnect:
                        raise dropped from None
                    reason = str(dropped)
                if not self.reconnect:
                    return
                attempt += 1
                self.reconnects += 1
                last_byte = last_byte if last_byte is not None else time.monotonic()
                delay = self.backoff.delay(attempt)
                self._set(StreamState("reconnecting", delay, time.monotonic() + delay, attempt=attempt, reason=reason))
                await asyncio.sleep(delay)
        finally:
            self._set(StreamState("closed", reason=self.state.reason))

    def _item(self, line: bytes) -> Any:
        if len(line) < 120 and b'"debug"' in line:  # a debug event is short; a banner rarely is
            event = debug_event(line)
            if event is not None:
                self.discarded += event.discarded
                return event
        self.received += 1
        return line if self.raw else StreamBanner(line)


def debug_event(line: bytes) -> StreamDebug | None:
    """The server's ``{"event": "debug", "discarded": N}``, or None for any other line."""
    try:
        body = loads(line)
    except ValueError:
        return None
    if not isinstance(body, dict) or body.get("event") != "debug":
        return None
    discarded = body.get("discarded")
    return StreamDebug(discarded if type(discarded) is int else 0)


class _Retry(Exception):
    """A failure worth another attempt (a 5xx or 429 answer)."""


def retryable(error: errors.APIError) -> bool:
    return error.status >= 500 or error.status == 429


class StreamClient(HostClient):
    """Banners as they are collected. Each method returns a :class:`Stream` (see the module)."""

    def banners(self, **kw: Any) -> Stream:
        return Stream(self, "/banners", **kw)

    def asn(self, asns: str | Iterable[str], **kw: Any) -> Stream:
        return Stream(self, f"/asn/{segment(csv(asns))}", **kw)

    def countries(self, countries: str | Iterable[str], **kw: Any) -> Stream:
        return Stream(self, f"/countries/{segment(csv(countries))}", **kw)

    def ports(self, ports: str | Iterable[int], **kw: Any) -> Stream:
        return Stream(self, f"/ports/{segment(csv(ports))}", **kw)

    def vulns(self, vulns: str | Iterable[str], **kw: Any) -> Stream:
        return Stream(self, f"/vulns/{segment(csv(vulns))}", **kw)

    def alert(self, alert_id: str | None = None, **kw: Any) -> Stream:
        """Banners in the networks of every alert of the key's account, or of the one ``alert_id``
        (an unknown id is a :class:`~spyglass.client.errors.NotFound`)."""
        return Stream(self, f"/alert/{segment(alert_id)}" if alert_id else "/alert", **kw)


async def collect(transport: Transport, lines: list[bytes]) -> CollectResult:
    """``POST /spyglass/collect`` on a spyglass backend (``transport`` of its main host): banners,
    each the bytes of one JSON object, collected as its crawlers would (indexed, then published
    on the stream). Repeating it is harmless: a banner already collected is skipped."""
    body = await transport.request("POST", "/spyglass/collect", content=b"\n".join(lines) + b"\n", idempotent=True)
    if not isinstance(body, dict) or not all(type(body.get(k)) is int for k in ("received", "collected")):
        raise ResponseFormatError(f"{transport.base_url} answered the collect method with an unexpected body")
    problems = body.get("problems")
    shown = [p for p in problems if isinstance(p, str)] if isinstance(problems, list) else []
    return CollectResult(body["received"], body["collected"], bad if type(bad := body.get("bad")) is int else 0, shown)


@dataclass(frozen=True)
class CollectResult:
    received: int
    collected: int  # new to the backend's index, and so published
    bad: int = 0  # lines refused: not a banner, or one the backend cannot hold
    problems: list[str] = field(default_factory=list)  # the first of them, "line N: why" (N of ``lines``)
