"""Request bodies held at once, all accounts together (issue 44c, M5), on the middleware alone: the
room a body takes is given back once its request is answered, and the heap is trimmed after a
large one (glibc keeps what it freed otherwise)."""

from __future__ import annotations

from types import SimpleNamespace

import httpx

from spyglass.server import auth
from spyglass.server.auth import LARGE_BODY, KeyBeforeBody


class Keys:
    async def caller(self, key: str, address: str) -> SimpleNamespace:
        return SimpleNamespace(key=key, account=SimpleNamespace(id=hash(key)))


async def test_a_large_body_s_room_is_given_back_and_the_heap_trimmed_after(monkeypatch):
    trims: list[int] = []
    seen: list[int] = []
    monkeypatch.setattr(auth, "give_back_soon", lambda: trims.append(guard.receiving))

    async def app(scope, receive, send):
        seen.append(guard.receiving + guard.receiving_small)  # held while the app has the body
        body = b""
        while (message := await receive())["type"] == "http.request":
            body += message["body"]
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(len(body)).encode()})

    guard = KeyBeforeBody(app, keys=Keys(), max_body=4 * LARGE_BODY, max_receiving=8 * LARGE_BODY)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=guard), base_url="http://t") as client:
        small = await client.post("/intel/alert", params={"key": "a"}, content=b"{}")
        assert small.text == "2" and trims == []  # a small body: no trim
        large = await client.post("/intel/alert", params={"key": "a"}, content=b"x" * (2 * LARGE_BODY))
    assert large.text == str(2 * LARGE_BODY)
    assert seen == [2, 2 * LARGE_BODY] and trims == [0] and guard.receiving == 0


def test_small_bodies_have_room_when_large_ones_fill_the_server_s():
    """Attacker trial 4: four accounts trickling 16 MiB bodies left every other account's small
    writes 503; a body of at most FORM_MAX is received from a pool of its own."""
    import pytest

    from spyglass.server.auth import FORM_MAX
    from spyglass.server.errors import ApiError

    def declaring(size: int) -> dict:
        return {"headers": [(b"content-length", str(size).encode())]}

    guard = KeyBeforeBody(None, keys=Keys(), max_body=4 * LARGE_BODY, max_receiving=8 * LARGE_BODY)  # type: ignore[arg-type]
    for account in range(4):
        guard.reserve(declaring(2 * LARGE_BODY), account)
    with pytest.raises(ApiError) as full:
        guard.reserve(declaring(2 * LARGE_BODY), 5)
    assert full.value.status == 503
    assert guard.reserve(declaring(300), 6) == 300 and guard.reserve(declaring(FORM_MAX), 7) == FORM_MAX
    guard.release(300, 6)
    guard.release(FORM_MAX, 7)
    assert guard.receiving_small == 0 and guard.receiving == 8 * LARGE_BODY
