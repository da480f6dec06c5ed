"""Who is calling: the key, its account and plan, credits, and an optional per-key rate limit."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from fastapi import Request, Security
from fastapi.security import APIKeyQuery
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from spyglass.server.asgibody import BodyTooLarge, declared_length, has_body, receive_body, replaying, send_json
from spyglass.server.banners.store import StoreUnavailable
from spyglass.server.errors import ApiError, outage_log, unavailable
from spyglass.server.framing import names_nothing, refused_framing
from spyglass.server.memory import give_back_soon
from spyglass.server.state.accounts import Account, AccountState, NoCreditsLeft

log = logging.getLogger("spyglass.server")

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
NO_KEY = "No API key given: pass it as the query parameter 'key'"
# A form that may carry the key (no key in the query) is read before anyone is known: kept small and quick.
FORM_MAX, FORM_TIMEOUT = 64 * 1024, 5.0
MAX_UPLOADS = 8  # bodies one account may be sending at once
ACCOUNT_SHARE = 4  # an account holds at most this fraction (1/N) of the bodies being received at once
RECEIVING_RETRY = "2"  # seconds, past the server's bytes of bodies at once (KeyBeforeBody.reserve)
LARGE_BODY = 1 << 20  # bytes of a body past which its end is followed by a trim of the heap (memory.py)
CLOSE = (b"connection", b"close")
# The OpenAPI document's security scheme; every route that depends on `caller` requires it.
API_KEY = APIKeyQuery(
    name="key",
    scheme_name="key",
    auto_error=False,
    description="The account's API key (existing clients may send it in a form body instead)",
)


class KeyRateLimiter:
    """Token buckets by name (a key, an address); ``rate`` a second with a burst of ``burst``."""

    MAX_NAMES = 100_000  # buckets kept at most: past it the fullest (idle) ones are forgotten

    def __init__(self, rate: float, burst: int = 3) -> None:
        self.rate, self.burst = rate, burst
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def check(self, key: str, cost: float = 1.0, *, spend: bool = True) -> float | None:
        """None when the call may go ahead (``cost`` tokens are spent, unless not ``spend``), else
        the seconds to wait (one costing more than ``burst`` never goes ahead: refuse it before)."""
        now = time.monotonic()
        with self._lock:
            tokens, stamp = self._buckets.get(key, (float(self.burst), now))
            tokens = min(self.burst, tokens + (now - stamp) * self.rate)
            if tokens < cost:
                self._buckets[key] = (tokens, now)
                return (cost - tokens) / self.rate
            self._buckets[key] = (tokens - cost if spend else tokens, now)
            if len(self._buckets) > self.MAX_NAMES:
                self._forget(now)
            return None

    def left(self, key: str) -> float:
        """The tokens ``key`` has now."""
        now = time.monotonic()
        with self._lock:
            tokens, stamp = self._buckets.get(key, (float(self.burst), now))
        return min(self.burst, tokens + (now - stamp) * self.rate)

    def _forget(self, now: float) -> None:
        full = [k for k, (t, s) in self._buckets.items() if t + (now - s) * self.rate >= self.burst]
        for k in full:
            del self._buckets[k]


class Hourly:
    """A plan's number of something an hour, by name (an account, a destination): a bucket of
    that many, given back over the hour. Kept by each backend, as invitation e-mails are."""

    def __init__(self) -> None:
        self._limiters: dict[int, KeyRateLimiter] = {}  # by the number an hour

    def spend(self, name: str, per_hour: int, cost: int = 1, *, spend: bool = True) -> float | None:
        """None when ``cost`` of ``name``'s ``per_hour`` are spent (or, not ``spend``, are there to
        spend), else the seconds to wait."""
        limiter = self._limiters.setdefault(per_hour, KeyRateLimiter(per_hour / 3600, burst=per_hour))
        return limiter.check(name, cost, spend=spend)

    def left(self, name: str, per_hour: int) -> float:
        """How many of ``name``'s ``per_hour`` are there to spend now."""
        return self._limiters.setdefault(per_hour, KeyRateLimiter(per_hour / 3600, burst=per_hour)).left(name)


def too_many(wait: float, message: str) -> ApiError:
    return ApiError(429, message, headers={"Retry-After": str(max(1, math.ceil(wait)))})


def client_address(request: Request) -> str:
    return request.client.host if request.client else "?"


def failed_keys_limiter() -> KeyRateLimiter:
    """A wrong key costs its address one of 20 tries, given back one every 3 s: guessing keys from
    one address stops at that pace, with 429s, and a typo or two costs nothing."""
    return KeyRateLimiter(rate=1 / 3, burst=20)


KEY_TTL = 5.0  # seconds a process keeps a right key's account


class KeyCheck:
    """Who a key is (:meth:`authenticate`), and the toll wrong keys take of their address.

    A right key's account is kept ``KEY_TTL`` seconds in this process, so most requests ask the
    state nothing to learn who calls (with ``--state`` that was a round trip to PostgreSQL on every
    request, most of what it added to a search). What may be old in a kept account is only its
    balances, as keys never move or go and plans and roles never change: a charge answers with the
    new balances and they are kept at once, ``/api-info`` and ``/account/profile`` read them afresh,
    and an answer from a kept account leaves them out of its headers (:class:`CreditHeaders`).
    Credits are always spent in the state itself, so they stay exact. Only right keys are kept, so a new key is
    known at once, and a kept account is the month's, so a new month's allowances are never missed.
    A way to revoke a key would have to forget it here (and wait ``KEY_TTL`` on other processes)."""

    MAX_KEPT = 100_000  # past it the expired entries are dropped

    def __init__(self, accounts: AccountState, ttl: float = KEY_TTL) -> None:
        self.accounts, self.ttl = accounts, ttl
        self.failed = failed_keys_limiter()
        self._kept: dict[str, tuple[Account, float, str]] = {}  # key: (account, until, month)
        self._lock = threading.Lock()

    def _month(self) -> str:
        return self.accounts.clock().strftime("%Y-%m")

    def kept(self, key: str) -> Account | None:
        """The key's account if this process knows it (no waiting: callable on the event loop)."""
        with self._lock:
            account, until, month = self._kept.get(key) or (None, 0.0, "")
        return account if until > time.monotonic() and month == self._month() else None

    def authenticate(self, key: str, address: str) -> Account:
        """The key's account, or a 401 ``ApiError``. A right key is never refused for the wrong keys
        others sent from its address (every local user shares 127.0.0.1): the key is looked up
        first, and only a wrong one spends one of the address's tries, 429 once they are spent."""
        if (account := self.kept(key)) is not None:
            return account
        month = self._month()
        account = self.accounts.account_for_key(key)
        if account is None:
            if (wait := self.failed.check(address)) is not None:
                raise too_many(wait, "Too many invalid API keys from this address: try again later")
            raise ApiError(401, "Invalid API key")
        self.keep(key, account, month)
        return account

    async def caller(self, key: str, address: str) -> Caller:
        """Who calls with ``key`` (see :meth:`authenticate`), asking the state in a thread only when
        this process does not know the key (a state on another machine answers over the network)."""
        account = self.kept(key)
        if account is not None:
            return Caller(key, account, fresh=False)
        return Caller(key, await run_in_threadpool(self.authenticate, key, address))

    async def lookup(self, key: str) -> Caller | None:
        """Who calls with ``key``, or None for a wrong one, spending none of its address's tries:
        for what must know the account before the app, whose own check answers a wrong key."""
        if (account := self.kept(key)) is not None:
            return Caller(key, account, fresh=False)
        month = self._month()
        account = await run_in_threadpool(self.accounts.account_for_key, key)
        if account is None:
            return None
        self.keep(key, account, month)
        return Caller(key, account)

    def keep(self, key: str, account: Account, month: str | None = None) -> None:
        """``account`` as it stands now (after a charge, a fresh read) is what ``key`` is."""
        now = time.monotonic()
        with self._lock:
            if len(self._kept) >= self.MAX_KEPT:
                self._kept = {k: v for k, v in self._kept.items() if v[1] > now}
            self._kept[key] = (account, now + self.ttl, month or self._month())


@dataclass
class Caller:
    """Who is calling: the key and its account, as it stands after what this request spent.
    ``fresh``: the account's balances were read from the state for this request (a kept account's
    may be a few seconds old, and are then not said in the answer's headers)."""

    key: str
    account: Account
    fresh: bool = True

    def refresh(self, keys: KeyCheck) -> Account:
        """The account as the state has it now, kept so (where a client reads its credits)."""
        self.account, self.fresh = keys.accounts.account(self.account.id), True
        keys.keep(self.key, self.account)
        return self.account

    def require_paid(self, what: str) -> None:
        if not self.account.plan.paid:
            raise ApiError(403, f"{what} requires a paid API plan")

    def require_enterprise(self, what: str) -> None:
        if not self.account.plan.enterprise:
            raise ApiError(403, f"{what} requires an enterprise plan")

    def require_collector(self) -> None:
        if not self.account.collector:
            raise ApiError(
                403,
                "Collecting banners requires the collector role, which an operator gives a key"
                " (spyglass keys create --collector)",
            )


class Charger:
    """Spends the caller's credits: ``charge(query=1)``, once the work has succeeded, so that a
    failed request costs nothing; or ``with charge.meanwhile(query=1):`` around the work. Short of
    credits: a 402 ``{error}`` and nothing spent. Either way the caller's balances are then as the
    state has them, and the key check keeps them."""

    def __init__(self, keys: KeyCheck, who: Caller) -> None:
        self.keys, self.who = keys, who

    def __call__(self, *, query: int = 0, scan: int = 0) -> Account:
        return self._settle(lambda: self.keys.accounts.charge(self.who.account.id, query=query, scan=scan))

    @contextmanager
    def meanwhile(self, *, query: int = 0, scan: int = 0) -> Iterator[None]:
        """Spends the credits in another thread while the block does the work, so that a state across
        the network adds its round trip to no request that takes longer than it. The block failed:
        what was spent is given back (a failed request costs nothing). Short of credits: 402 once
        the block is done, nothing spent."""
        if not (query or scan):
            yield
            return
        accounts, account_id = self.keys.accounts, self.who.account.id
        spent = _spending().submit(accounts.charge, account_id, query=query, scan=scan)
        try:
            yield
        except BaseException:
            if spent.exception() is None:  # (waits for it)
                try:
                    accounts.charge(account_id, query=-query, scan=-scan)
                except StoreUnavailable as exc:
                    log.warning("account %d not given back %d query, %d scan credits: %s", account_id, query, scan, exc)
            raise
        self._settle(spent.result)

    def _settle(self, spend: Callable[[], Account]) -> Account:
        try:
            self.who.account, self.who.fresh = spend(), True
        except NoCreditsLeft as exc:
            self.who.refresh(self.keys)
            raise ApiError(
                402,
                f"Insufficient {exc.kind} credits, please upgrade your API plan or wait for the monthly limit to reset",
            ) from None
        self.keys.keep(self.who.key, self.who.account)
        return self.who.account


_spender: ThreadPoolExecutor | None = None
_spender_lock = threading.Lock()


def _spending() -> ThreadPoolExecutor:
    """The threads that spend credits beside the work (made on first use: in the process that serves)."""
    global _spender
    with _spender_lock:
        if _spender is None:
            _spender = ThreadPoolExecutor(max_workers=8, thread_name_prefix="spyglass-charge")
        return _spender


async def caller(request: Request, key: str | None = Security(API_KEY)) -> Caller:
    """FastAPI dependency: the authenticated caller, or a 401/429 ``{error}``."""
    if not key and request.headers.get("content-type", "").startswith(FORM_TYPES):
        sent = (await request.form()).get("key")  # existing clients send it in the form body
        key = sent if isinstance(sent, str) else None
    if not key:
        raise ApiError(401, NO_KEY)
    state = request.app.state
    who: Caller | None = getattr(request.state, "caller", None)  # KeyBeforeBody's, for a body's key
    if who is None or who.key != key:
        who = await state.keys.caller(key, client_address(request))
    limiter: KeyRateLimiter | None = getattr(state, "rate_limiter", None)
    if limiter is not None:
        wait = limiter.check(key)
        if wait is not None:
            raise too_many(wait, "Rate limit reached: too many requests for this key")
    request.state.caller = who  # CreditHeaders reads its balances when the answer starts
    return who


class CreditHeaders:
    """ASGI middleware: an authenticated answer says the caller's balances in headers, so a client
    can show credits without asking for them: every answer that read them from the state (a charge,
    ``/api-info``, a key's first use in ``KEY_TTL``), never one a few seconds old, so that a client
    never steps back to an older balance than it was last told."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_credits(message: Message) -> None:
            if message["type"] == "http.response.start":
                who: Caller | None = scope.get("state", {}).get("caller")
                if who is not None and who.fresh:
                    account = who.account
                    headers = list(message.get("headers", []))
                    headers.append((b"x-query-credits", str(account.query_credits).encode()))
                    headers.append((b"x-scan-credits", str(account.scan_credits).encode()))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_credits)


class KeyBeforeBody:
    """ASGI middleware: a request with a body is answered 401 at once, its body unread, unless it
    carries a right key; then its body is received whole (at most ``max_body`` bytes, 413 past it;
    ``MAX_UPLOADS`` at once per account, 429 past it; at most ``max_receiving`` bytes of bodies
    received or being answered at once, all accounts together (bodies of at most ``FORM_MAX`` in a
    pool of their own, a quarter as large), 503 past it, unread, and a quarter of
    them per account, 429 past it: one account's 16 MiB heads left every other one's writes 503
    for 20-30 s) before the
    app, and LoadShedding's count, see the request. So a slow sender holds only its connection
    (the guard closes it after the body timeout), never a slot others need. Existing clients may
    send the key in a form body: with no key in the query, a form of at most ``FORM_MAX`` bytes
    that arrives within ``FORM_TIMEOUT`` is read for it. Paths in ``exempt`` (geonet) take no key."""

    def __init__(
        self,
        app: ASGIApp,
        keys: KeyCheck,
        max_body: int,
        max_receiving: int | None = None,
        exempt: tuple[str, ...] = ("/geonet",),
    ) -> None:
        self.app, self.keys = app, keys
        self.max_body, self.exempt = max_body, exempt
        self.max_receiving = max(max_body, max_receiving or 0)  # one whole body always fits
        self.sending: Counter[int] = Counter()  # bodies being received, by account
        self.receiving = 0  # bytes of the bodies being received and answered, all accounts together
        # Bodies of at most FORM_MAX (an alert's edit, a notifier) have a pool of their own: four
        # accounts' large uploads, trickled, left every other account's small writes 503 (trial 4).
        self.receiving_small = 0
        self.max_small = max(FORM_MAX, self.max_receiving // ACCOUNT_SHARE)
        self.held: Counter[int] = Counter()  # of those, by account
        self.share = max(max_body, self.max_receiving // ACCOUNT_SHARE)  # an account's most of them

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (refused := refused_framing(scope)):  # before anything reads them
            await send_json(send, refused[0], json.dumps({"error": refused[1]}).encode(), [CLOSE])
            return
        if scope["type"] == "http" and (nothing := names_nothing(scope)):  # (a body is left unread: close)
            await send_json(send, 404, json.dumps({"error": nothing}).encode(), [CLOSE] if has_body(scope) else [])
            return
        if scope["type"] != "http" or scope["path"].startswith(self.exempt) or not has_body(scope):
            return await self.app(scope, receive, send)
        key = QueryParams(scope["query_string"]).get("key")
        content_type = next((v for k, v in scope["headers"] if k == b"content-type"), b"").decode("latin-1")
        reserved, account = 0, 0  # of `receiving` (and of the account's share), until the app is done with the body
        try:
            if key:
                who = await self.keys.caller(key, client_address(Request(scope)))
                scope.setdefault("state", {})["caller"] = who  # the app's `caller` takes it as it is
                account = who.account.id
                reserved = self.reserve(scope, account)
                body = await self.receive_for(who.account, scope, receive)
            elif content_type.startswith(FORM_TYPES):
                body = await self.key_from_form(scope, receive)
            else:
                raise ApiError(401, NO_KEY)
        except (ApiError, StoreUnavailable) as exc:  # before the app's handlers: answered here as they would
            self.release(reserved, account)
            if isinstance(exc, StoreUnavailable):
                outage_log(scope["method"], scope["path"], exc)
            error = unavailable(exc) if isinstance(exc, StoreUnavailable) else exc
            headers = [(k.lower().encode(), v.encode()) for k, v in (error.headers or {}).items()]
            # connection: close, as the rest of the body is left unread
            await send_json(send, error.status, json.dumps({"error": error.message}).encode(), [*headers, CLOSE])
            return
        except BaseException:
            self.release(reserved, account)
            raise
        try:
            if body is None:
                log.debug("%s %s: the client went away while sending its body", scope["method"], scope["path"])
                return
            await self.app(scope, replaying(body, receive), send)
        finally:
            del body  # before the heap is trimmed
            self.release(reserved, account)

    def reserve(self, scope: Scope, account: int) -> int:
        """Room in ``max_receiving`` for the request's body (its declared length, or the most a
        body may be when it comes in chunks); 429 past the account's share of it, 503 if there is
        none: bodies are held whole."""
        size = min(declared_length(scope) or self.max_body, self.max_body)
        if self.held[account] + size > self.share:
            raise too_many(
                int(RECEIVING_RETRY),
                f"This account's bodies being received are at {self.share >> 20} MiB, its share of the"
                f" server's {self.max_receiving >> 20} MiB: wait for one to end",
            )
        small = size <= FORM_MAX
        used, most = (self.receiving_small, self.max_small) if small else (self.receiving, self.max_receiving)
        if used + size > most:
            raise ApiError(
                503,
                f"The server is receiving {most >> 20} MiB of {'small ' if small else ''}request bodies at once,"
                " its limit for all accounts: try again in a few seconds",
                headers={"Retry-After": RECEIVING_RETRY},
            )
        if small:
            self.receiving_small += size
        else:
            self.receiving += size
        self.held[account] += size
        return size

    def release(self, size: int, account: int) -> None:
        if size <= FORM_MAX:
            self.receiving_small -= size
        else:
            self.receiving -= size
        self.held[account] -= size
        if not self.held[account]:
            del self.held[account]
        if size >= LARGE_BODY:  # glibc keeps what a large body freed: given back within seconds
            give_back_soon()

    async def receive_for(self, account: Account, scope: Scope, receive: Receive) -> list[bytes] | None:
        if self.sending[account.id] >= MAX_UPLOADS:
            raise too_many(1, f"{MAX_UPLOADS} uploads of this account are under way: wait for one to end")
        self.sending[account.id] += 1
        try:
            too_large = f"The body is over {self.max_body >> 20} MiB: send it in several requests"
            return await self.receive(scope, receive, self.max_body, too_large)
        finally:
            self.sending[account.id] -= 1
            if not self.sending[account.id]:
                del self.sending[account.id]

    async def key_from_form(self, scope: Scope, receive: Receive) -> list[bytes] | None:
        """The form's body, once the key in it is found right (401 if none is, 408 if it is slow)."""
        try:
            async with asyncio.timeout(FORM_TIMEOUT):
                too_large = f"A form with the key in it is over {FORM_MAX >> 10} KiB: pass the key in the query"
                body = await self.receive(scope, receive, FORM_MAX, too_large)
        except TimeoutError:
            raise ApiError(
                408, f"The form did not arrive within {FORM_TIMEOUT:g} s: pass the key in the query"
            ) from None
        if body is None:
            return None
        try:
            async with Request(scope, replaying(body, receive)).form() as form:
                key = form.get("key")
        except HTTPException as exc:  # a form that cannot be parsed
            raise ApiError(400, f"Invalid form: {exc.detail}") from None
        if not isinstance(key, str) or not key:
            raise ApiError(401, NO_KEY)
        scope.setdefault("state", {})["caller"] = await self.keys.caller(key, client_address(Request(scope)))
        return body

    @staticmethod
    async def receive(scope: Scope, receive: Receive, most: int, too_large: str) -> list[bytes] | None:
        if declared_length(scope) > most:
            raise ApiError(413, too_large)  # said at once, without reading any of it
        try:
            return await receive_body(receive, most)
        except BodyTooLarge:
            raise ApiError(413, too_large) from None
