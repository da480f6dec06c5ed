"""The client against the embedded backend under uvicorn: account, plan and utility methods."""

from __future__ import annotations

import httpx
import pytest
from fastapi import APIRouter

from spyglass.client import AuthenticationError, Clients, NotFound
from spyglass.server.deps import Who


async def test_api_info_reports_plan_and_limits(backend, clients):
    info = await clients.account.api_info()
    assert info.plan == "enterprise"
    assert info.usage_limits is not None
    assert info.query_credits == info.usage_limits.query_credits > 0
    assert info.unlocked and info.https
    assert clients.credits.plan == "enterprise"
    assert clients.credits.query == info.query_credits


async def test_free_plan_has_no_query_credits(backend):
    async with Clients.from_profile(backend.profile(backend.key("free"))) as c:
        info = await c.account.api_info()
        profile = await c.account.profile()
    assert (info.plan, info.query_credits, info.scan_credits, info.unlocked) == ("free", 0, 0, False)
    assert profile.member is False


async def test_profile(clients):
    profile = await clients.account.profile()
    assert profile.member is True
    assert profile.created and profile.created[:4].isdigit()


async def test_credits_tracked_from_any_response(backend):
    key = backend.key("member")
    account = backend.store.account_for_key(key)
    backend.store.set_credits(account.id, query=42, scan=7)
    async with Clients.from_profile(backend.profile(key)) as c:
        seen = []
        c.credits.listeners.append(lambda credits: seen.append((credits.query, credits.scan)))
        await c.tools.my_ip()  # says nothing about credits in its body
    assert seen == [(42, 7)]


async def test_api_info_and_profile_read_balances_afresh(backend):
    """The key check keeps a key's account a few seconds; what another process spent since (here the
    state written directly) shows at once where a client asks for its credits."""
    key = backend.key("member")
    account = backend.store.account_for_key(key)
    async with Clients.from_profile(backend.profile(key)) as c:
        assert (await c.account.api_info()).query_credits == 100
        backend.store.set_credits(account.id, query=42, scan=7)
        info = await c.account.api_info()
        assert (info.query_credits, info.scan_credits) == (42, 7)
        assert (c.credits.query, c.credits.scan) == (42, 7)  # the headers of that answer agree
        backend.store.set_credits(account.id, query=41)
        assert (await c.account.profile()).credits == 41


def test_credit_headers_are_said_only_as_read_from_the_state(backend):
    """An answer from a key's kept account leaves the headers out rather than say balances that may
    be old: a client never steps back to an older balance (the dashboard reloads what shows credits
    when they change, and would go back and forth)."""
    key = backend.key("member")
    account = backend.store.account_for_key(key)

    def credits(path: str, **params) -> str | None:
        answer = httpx.get(f"{backend.url}{path}", params={"key": key, **params})
        assert answer.status_code == 200, answer.text
        return answer.headers.get("x-query-credits")

    assert credits("/tools/myip") == "100"  # the key's first use: read from the state
    assert credits("/tools/myip") is None  # kept
    backend.store.set_credits(account.id, query=7)  # as another process would spend them
    assert credits("/tools/myip") is None  # not the old 100
    assert credits("/api-info") == "7"
    assert credits("/intel/host/search", query="port:22") == "6"  # a charge says what it left
    assert credits("/tools/myip") is None


async def test_myip_and_headers(clients):
    assert await clients.tools.my_ip() == "127.0.0.1"
    headers = await clients.tools.http_headers()
    assert headers["User-Agent"].startswith("spyglass/")
    assert headers["Host"].startswith("127.0.0.1:")


@pytest.mark.parametrize("key, message", [(None, "No API key"), ("not-a-key", "Invalid API key")])
async def test_missing_or_unknown_key(backend, key, message):
    async with Clients.from_profile(backend.profile(key)) as c:
        with pytest.raises(AuthenticationError) as caught:
            await c.account.api_info()
    assert caught.value.status == 401
    assert message in str(caught.value)
    if key:
        assert key not in str(caught.value)


async def test_unknown_method_is_404_with_error_body(backend, clients):
    with pytest.raises(NotFound):
        await clients.transport.request("GET", "/no/such/method")
    raw = httpx.get(f"{backend.url}/no/such/method")
    assert raw.status_code == 404 and raw.json() == {"error": "No such method"}


def test_bad_parameter_is_400_with_error_body(backend):
    router = APIRouter()

    @router.get("/test/typed")
    def typed(who: Who, n: int) -> dict:
        return {"n": n}

    backend.app.include_router(router)
    raw = httpx.get(f"{backend.url}/test/typed", params={"n": "x", "key": backend.key()})
    assert raw.status_code == 400
    assert raw.json()["error"].startswith("Invalid request: n:")


def test_key_from_form_body(backend):
    """Existing clients send the key in the form body of form-encoded POSTs."""
    router = APIRouter()

    @router.post("/test/form-auth")
    def form_auth(who: Who) -> dict:
        return {"user": who.account.username}

    backend.app.include_router(router)
    key = backend.key()
    ok = httpx.post(f"{backend.url}/test/form-auth", data={"key": key, "ips": "1.2.3.4"})
    assert ok.status_code == 200
    assert ok.headers["x-query-credits"].isdigit()
    denied = httpx.post(f"{backend.url}/test/form-auth", data={"ips": "1.2.3.4"})
    assert denied.status_code == 401


def test_every_method_requires_a_key(backend):
    for path in ("/api-info", "/account/profile", "/tools/myip", "/tools/httpheaders"):
        raw = httpx.get(f"{backend.url}{path}")
        assert raw.status_code == 401, path
        assert "error" in raw.json()


async def test_guessing_keys_from_one_address_is_stopped(tmp_path):
    """Twenty wrong keys from one address, then 429 for a wrong key from it, with Retry-After, on
    every host. A right key is still answered: others' guesses must not lock its owner out."""
    from tests.conftest import start_backend

    server, backend = start_backend(tmp_path)
    with server:
        good = backend.key()
        wrong = [httpx.get(f"{backend.url}/api-info", params={"key": f"guess{i:028d}"}) for i in range(20)]
        # a try comes back every 3 s: on a slow machine some may have by now
        after = [httpx.get(f"{backend.url}/api-info", params={"key": "guess" * 6}) for _ in range(10)]
        stream = [httpx.get(f"{backend.url}/stream/intel/banners", params={"key": "guess" * 6}) for _ in range(3)]
        right = httpx.get(f"{backend.url}/api-info", params={"key": good})
    backend.store.close()
    assert {w.status_code for w in wrong} == {401}
    refused = [a for a in after if a.status_code == 429]
    assert refused and "invalid API keys" in refused[0].json()["error"] and refused[0].headers["retry-after"]
    assert 429 in {s.status_code for s in stream}  # the other hosts share the count
    assert right.status_code == 200
