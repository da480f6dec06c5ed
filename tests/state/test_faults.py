"""Faults under two ``spyglass serve`` processes over one PostgreSQL state: a backend killed
(``kill -9``) while credits are charged through both, and PostgreSQL restarted under both."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from spyglass.server.state.postgres import PostgresAccounts
from spyglass.testing.alerts import Receiver, banner
from spyglass.testing.postgres import PostgresServer
from tests.servers import installed
from tests.state.shared import ServeProcess
from tests.state.test_alerts_backends import alert_on, collect

START, CLIENTS, EACH = 150, 24, 10  # more charged requests than credits, from both backends at once
KILL_AFTER = 40  # answered searches before backend A is killed
SEARCH = ("/intel/host/search", {"query": "port:22"})


def test_a_backend_killed_while_charging_loses_and_doubles_no_credit(postgres_url, tmp_path):
    accounts = PostgresAccounts(postgres_url, tmp_path / "keys")
    try:
        key = accounts.create_key("member")
        account = accounts.account_for_key(key)
        accounts.set_credits(account.id, query=START)
        with (
            ServeProcess(tmp_path / "a", None, postgres_url) as a,
            ServeProcess(tmp_path / "b", None, postgres_url) as b,
        ):
            served, unanswered = asyncio.run(_charge_while_killing(a, b, key))
            assert a.process.poll() is not None  # killed mid-run, B served the rest
        balance = accounts.account(account.id).query_credits
    finally:
        accounts.close()
    # every credit was spent (more requests than credits), none twice and never below zero: a search
    # answered 200 cost one; one cut off by the kill cost one at most (charged, its answer lost)
    assert balance == 0 and served <= START <= served + unanswered, (served, unanswered)


async def _charge_while_killing(a: ServeProcess, b: ServeProcess, key: str) -> tuple[int, int]:
    """Searches from ``CLIENTS`` clients, half on each backend; A is killed once ``KILL_AFTER`` have
    been answered, and its clients go on through B (as behind a load balancer). How many were
    answered 200, and how many got no answer from a request A had begun."""
    answered, unanswered = [0], [0]

    async def search(http: httpx.AsyncClient, url: str) -> httpx.Response:
        """A search, sent again while it is past the plan's requests at once (429)."""
        while (answer := await http.get(url + SEARCH[0], params={"key": key, **SEARCH[1]})).status_code == 429:
            await asyncio.sleep(0.01)
        return answer

    async def client(first: ServeProcess) -> None:
        target = first
        async with httpx.AsyncClient(timeout=60) as http:
            for _ in range(EACH):
                try:
                    answer = await search(http, target.url)
                except httpx.ConnectError:  # A is gone: never reached it, nothing charged
                    target = b
                    answer = await search(http, target.url)
                except httpx.TransportError:  # cut off mid-request by the kill
                    unanswered[0] += 1
                    target = b
                    continue
                assert answer.status_code in (200, 402), answer.text
                if answer.status_code == 200:
                    answered[0] += 1
                    if answered[0] == KILL_AFTER:
                        a.process.kill()  # SIGKILL: no stop, no clean-up

    await asyncio.gather(*(client(a if i % 2 else b) for i in range(CLIENTS)))
    a.process.wait(30)
    return answered[0], unanswered[0]


@pytest.mark.external
def test_postgresql_restarted_under_two_backends_is_503_then_both_recover(tmp_path):
    with installed():
        server = PostgresServer().start()
    try:
        accounts = PostgresAccounts(server.url(), tmp_path / "keys")
        analyst, collector = accounts.create_key("member"), accounts.create_key("enterprise", collector=True)
        accounts.set_credits(accounts.account_for_key(analyst).id, query=100_000)  # the load spends some
        accounts.close()
        options = ("--notifier-allow", "127.0.0.0/8")
        with (
            ServeProcess(tmp_path / "a", None, server.url(), *options) as a,
            ServeProcess(tmp_path / "b", None, server.url(), *options) as b,
            Receiver() as receiver,
        ):
            asyncio.run(alert_on(a.url, analyst, receiver, ["127.0.4.0/28"]))  # made before the restart
            before = _credits(a.url, analyst)
            answers = _load_while(server.stop, [a.url, b.url], analyst)
            statuses = [status for status, _ in answers]
            assert set(statuses) <= {200, 503} and 503 in statuses, statuses
            # those cut off answer as any request without the state does
            assert all(clear for status, clear in answers if status == 503)
            for url in (a.url, b.url):  # no state: a clear 503 with Retry-After, on both
                assert _clear(httpx.get(url + SEARCH[0], params={"key": analyst, **SEARCH[1]}, timeout=30))
            server.start()  # on the same port: nobody restarts the backends
            for url in (a.url, b.url):  # 503s while each reconnects (test_pool: stale ones go at once)
                _until_answered(url, analyst)
            # accounts: one balance, charged once for each search answered (and at most once for
            # one cut off between the charge's commit and its acknowledgement)
            after, charged = _credits(a.url, analyst), statuses.count(200) + 2
            assert _credits(b.url, analyst) == after and before - charged - statuses.count(503) <= after
            assert after <= before - charged
            # alerts: one made before the restart, a banner collected through the other backend after
            collect(b.url, collector, [banner("127.0.4.1", 80)])
            receiver.wait_for("127.0.4.1:80", timeout=60)
            # the directory: saved through one, found through the other
            saved = httpx.post(
                f"{a.url}/intel/query", params={"key": analyst, "title": "after restart", "query": "port:22"}
            )
            assert saved.status_code == 200, saved.text
            found = httpx.get(f"{b.url}/intel/query/search", params={"key": analyst, "query": "after restart"})
            assert found.status_code == 200 and saved.json()["id"] in [m["id"] for m in found.json()["matches"]]
    finally:
        server.remove()


def _load_while(act: Callable[[], None], urls: list[str], key: str) -> list[tuple[int, bool]]:
    """Searches from 8 threads on both backends, ``act`` done in the middle of them; each one's
    status, and whether it is a clear answer (a 503 with Retry-After and the state named)."""
    stop = threading.Event()

    def searches(url: str) -> list[tuple[int, bool]]:
        out = []
        with httpx.Client(timeout=60) as http:
            while not stop.is_set() or len(out) < 3:
                answer = http.get(url + SEARCH[0], params={"key": key, **SEARCH[1]})
                if answer.status_code == 429:  # past the plan's requests at once: sent again
                    time.sleep(0.01)
                    continue
                out.append((answer.status_code, _clear(answer)))
        return out

    with ThreadPoolExecutor(8) as pool:
        running = [pool.submit(searches, urls[i % len(urls)]) for i in range(8)]
        time.sleep(0.3)
        act()
        stop.set()
        return [status for future in running for status in future.result()]


def _clear(answer: httpx.Response) -> bool:
    return (
        answer.status_code == 503
        and answer.headers.get("retry-after", "").isdigit()
        and answer.json()["error"] == "Service unavailable: the shared state cannot be used now. Try again shortly"
    )


def _credits(url: str, key: str) -> int:
    return httpx.get(f"{url}/api-info", params={"key": key}, timeout=30).json()["query_credits"]


def _until_answered(url: str, key: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while (answer := httpx.get(url + SEARCH[0], params={"key": key, **SEARCH[1]}, timeout=30)).status_code != 200:
        assert _clear(answer) and time.monotonic() < deadline, answer.text
        time.sleep(0.2)
