"""Two `spyglass serve` processes, each with a data dir of its own, over one PostgreSQL state:
one service for accounts and credits."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import httpx

from spyglass.server.state.postgres import PostgresAccounts
from spyglass.testing.backend import serve

START, CLIENTS, EACH = 120, 24, 8  # more charged requests than credits, from both backends at once


def test_a_key_made_anywhere_works_everywhere_and_credits_are_exact(postgres_url, tmp_path):
    made = subprocess.run(
        [sys.executable, "-m", "spyglass", "keys", "create", "--data", str(tmp_path / "cli"), "--plan", "member"]
        + ["--state", postgres_url],
        capture_output=True,
        text=True,
        check=True,
    )
    key = made.stdout.strip()
    with serve(tmp_path / "a", "--state", postgres_url) as a, serve(tmp_path / "b", "--state", postgres_url) as b:
        for url in (a, b):
            info = httpx.get(f"{url}/api-info", params={"key": key})
            assert info.status_code == 200 and info.json()["plan"] == "member"
        state = PostgresAccounts(postgres_url, tmp_path / "check")
        try:
            account = state.account_for_key(key)
            state.set_credits(account.id, query=START)
            statuses = asyncio.run(_charge_from_both(a, b, key))
            assert set(statuses) == {200, 402}, statuses
            served = statuses.count(200)
            assert served == START and state.account(account.id).query_credits == START - served == 0
            for url in (a, b):  # each backend sees the one balance
                answer = httpx.get(f"{url}/intel/host/search", params={"key": key, "query": "port:22"})
                assert answer.status_code == 402 and "Insufficient query credits" in answer.json()["error"]
        finally:
            state.close()


async def _charge_from_both(a: str, b: str, key: str) -> list[int]:
    """``CLIENTS`` clients, half on each backend, each sending ``EACH`` charged searches at once."""

    async def client(url: str) -> list[int]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            out = []
            for _ in range(EACH):
                params = {"key": key, "query": "port:22"}
                while (answer := await http.get("/intel/host/search", params=params)).status_code == 429:
                    await asyncio.sleep(0.01)  # past the plan's requests at once: sent again
                out.append(answer.status_code)
            return out

    results = await asyncio.gather(*(client(a if i % 2 else b) for i in range(CLIENTS)))
    return [status for statuses in results for status in statuses]


async def test_the_dashboards_backend_keeps_its_accounts_in_the_state_it_inherits(postgres_url, tmp_path, monkeypatch):
    from spyglass.local.launcher import EmbeddedBackend

    monkeypatch.setenv("SPYGLASS_STATE", postgres_url)
    backend = EmbeddedBackend(tmp_path / "data")
    profile = backend.start()
    try:
        await backend.wait_ready()
        info = httpx.get(f"{profile.url}/api-info", params={"key": profile.key})
        assert info.status_code == 200 and info.json()["plan"] == "enterprise"
    finally:
        backend.stop()
    state = PostgresAccounts(postgres_url, tmp_path / "check")
    try:
        assert state.account_for_key(profile.key).username == "local"  # in PostgreSQL, not the data dir
    finally:
        state.close()
