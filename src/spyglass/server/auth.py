"""Who is calling: the key, its account and plan, credits, and an optional per-key rate limit."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Any

from fastapi import Request, Security
from fastapi.security import APIKeyQuery

from spyglass.server.errors import ApiError
from spyglass.server.store import Account, NoCreditsLeft, Store

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
NO_KEY = "No API key given: pass it as the query parameter 'key'"
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

    def check(self, key: str) -> float | None:
        """None when the call may go ahead (a token is spent), else the seconds to wait."""
        now = time.monotonic()
        with self._lock:
            tokens, stamp = self._buckets.get(key, (float(self.burst), now))
            tokens = min(self.burst, tokens + (now - stamp) * self.rate)
            if tokens < 1:
                self._buckets[key] = (tokens, now)
                return (1 - tokens) / self.rate
            self._buckets[key] = (tokens - 1, now)
            if len(self._buckets) > self.MAX_NAMES:
                self._forget(now)
            return None

    def _forget(self, now: float) -> None:
        full = [k for k, (t, s) in self._buckets.items() if t + (now - s) * self.rate >= self.burst]
        for k in full:
            del self._buckets[k]


def too_many(wait: float, message: str) -> ApiError:
    return ApiError(429, message, headers={"Retry-After": str(max(1, math.ceil(wait)))})


def client_address(request: Request) -> str:
    return request.client.host if request.client else "?"


def authenticate(state: Any, key: str, address: str) -> Account:
    """The key's account, or a 401 ``ApiError``. A right key is never refused for the wrong keys
    others sent from its address (every local user shares 127.0.0.1): the key is looked up first,
    and only a wrong one spends one of the address's tries, 429 once they are spent."""
    account = state.store.account_for_key(key)
    if account is None:
        if (wait := state.failed_keys.check(address)) is not None:
            raise too_many(wait, "Too many invalid API keys from this address: try again later")
        raise ApiError(401, "Invalid API key")
    return account


def failed_keys_limiter() -> KeyRateLimiter:
    """A wrong key costs its address one of 20 tries, given back one every 3 s: guessing keys from
    one address stops at that pace, with 429s, and a typo or two costs nothing."""
    return KeyRateLimiter(rate=1 / 3, burst=20)


@dataclass
class Caller:
    key: str
    account: Account
    store: Store
    request: Request

    def require_paid(self, what: str) -> None:
        if not self.account.plan.paid:
            raise ApiError(403, f"{what} requires a paid API plan")

    def require_enterprise(self, what: str) -> None:
        if not self.account.plan.enterprise:
            raise ApiError(403, f"{what} requires an enterprise plan")

    def charge(self, *, query: int = 0, scan: int = 0) -> Account:
        """Spend credits; call it once the work has succeeded, so a failed request costs nothing.
        Short of credits: a 402 ``{error}`` and nothing spent."""
        try:
            self.account = self.store.charge(self.account.id, query=query, scan=scan)
        except NoCreditsLeft as exc:
            raise ApiError(
                402,
                f"Insufficient {exc.kind} credits, please upgrade your API plan or wait for the monthly limit to reset",
            ) from None
        self.request.state.account = self.account
        return self.account


async def caller(request: Request, key: str | None = Security(API_KEY)) -> Caller:
    """FastAPI dependency: the authenticated caller, or a 401/429 ``{error}``."""
    if not key and request.headers.get("content-type", "").startswith(FORM_TYPES):
        sent = (await request.form()).get("key")  # existing clients send it in the form body
        key = sent if isinstance(sent, str) else None
    if not key:
        raise ApiError(401, NO_KEY)
    state = request.app.state
    account = authenticate(state, key, client_address(request))
    limiter: KeyRateLimiter | None = getattr(state, "rate_limiter", None)
    if limiter is not None:
        wait = limiter.check(key)
        if wait is not None:
            raise too_many(wait, "Rate limit reached: too many requests for this key")
    request.state.account = account
    return Caller(key, account, state.store, request)


class CreditHeaders:
    """ASGI middleware: every authenticated answer says the caller's balances in headers,
    so a client can show credits without asking for them."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_credits(message) -> None:
            if message["type"] == "http.response.start":
                account = scope.get("state", {}).get("account")
                if account is not None:
                    headers = list(message.get("headers", []))
                    headers.append((b"x-query-credits", str(account.query_credits).encode()))
                    headers.append((b"x-scan-credits", str(account.scan_credits).encode()))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_credits)
