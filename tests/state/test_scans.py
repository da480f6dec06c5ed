"""What the scan service asks of the scans' state, on SQLite and on PostgreSQL alike: scans kept
with their progress, claimed once, held by a lease that lapses, let go, and cancelled for good."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest

from spyglass.server.state import OverBudget
from spyglass.server.state.accounts import iso, utcnow
from spyglass.server.state.scans import (
    CANCELLED,
    DONE,
    PAGE,
    PROCESSING,
    QUEUE,
    SUBMITTING,
    ScanState,
    ScansThisHour,
)


def _sqlite(request: pytest.FixtureRequest, folder: Path) -> ScanState:
    from spyglass.server.state.sqlite.scans import ScanStore

    return ScanStore(folder)


def _postgres(request: pytest.FixtureRequest, folder: Path) -> ScanState:
    from spyglass.server.state.postgres.scans import PostgresScans

    return PostgresScans(request.getfixturevalue("postgres_url"))


STATES: dict[str, Callable[[pytest.FixtureRequest, Path], ScanState]] = {"sqlite": _sqlite, "postgresql": _postgres}


@pytest.fixture(params=sorted(STATES))
def open_scans(request, tmp_path) -> Callable[[], ScanState]:
    """Opens the scans of this test (the same ones every time); closes what it opened."""
    opened: list[ScanState] = []

    def open_() -> ScanState:
        opened.append(STATES[request.param](request, tmp_path))
        return opened[-1]

    yield open_
    for state in opened:
        state.close()


@pytest.fixture
def scans(open_scans) -> ScanState:
    return open_scans()


def new(scans: ScanState, account_id: int = 1, size: int = 4):
    return scans.create(account_id=account_id, api_key="digest", size=size, spec='{"x": 1}', probes=size * 2)


def test_a_scan_is_kept_with_its_progress(scans):
    scan = new(scans)
    assert (scan.status, scan.size, scan.probes, scan.probed, scan.found, scan.internet) == (
        SUBMITTING,
        4,
        8,
        0,
        0,
        False,
    )
    assert scans.get(scan.id) == scan and scans.get("nope") is None and scans.get("a\x00b") is None
    scans.set_credits_left(scan.id, 96)
    scans.queue(scan.id)
    scans.progress(scan.id, 5, 2)
    now = scans.get(scan.id)
    assert (now.status, now.credits_left, now.probed, now.found) == (QUEUE, 96, 5, 2)
    other = scans.create(account_id=2, api_key="d", size=1, spec="{}", probes=1, internet=True)
    assert [s.id for s in scans.of_account(1)[0]] == [scan.id] and scans.get(other.id).internet
    assert scans.of_account(2) == ([scans.get(other.id)], 1)


def test_a_scan_is_claimed_once_and_finished(scans):
    scan = new(scans)
    scans.queue(scan.id)
    claimed = scans.claim("a", 30)
    assert claimed is not None and (claimed.id, claimed.status) == (scan.id, PROCESSING)
    assert scans.claim("b", 30) is None  # held by a's lease
    scans.queue(scan.id)  # a late queue does not undo the claim
    assert scans.get(scan.id).status == PROCESSING
    assert scans.renew(scan.id, "a", 30) and not scans.renew(scan.id, "b", 30)
    scans.finish(scan.id)
    assert scans.get(scan.id).status == DONE and not scans.renew(scan.id, "a", 30)
    assert scans.claim("b", 30) is None


def test_a_lapsed_lease_lets_another_resume_it_where_it_stands(scans):
    scan = new(scans)
    assert scans.claim("a", 1).id == scan.id
    scans.progress(scan.id, 3, 1)
    time.sleep(1.5)  # a stops renewing (killed): its lease lapses
    taken = scans.claim("b", 30)
    assert (taken.id, taken.probed, taken.found) == (scan.id, 3, 1)
    assert not scans.renew(scan.id, "a", 30)  # a, back, learns it is no longer its scan


def test_a_released_scan_is_claimed_at_once(scans):
    first, second = new(scans), new(scans)
    assert scans.claim("a", 30).id == first.id and scans.claim("a", 30).id == second.id
    scans.release("a")
    assert {scans.claim("b", 30).id, scans.claim("b", 30).id} == {first.id, second.id}


def test_a_cancelled_scan_is_never_claimed_and_its_renewal_fails(scans):
    scan = new(scans)
    scans.claim("a", 30)
    scans.set_status(scan.id, CANCELLED)
    assert not scans.renew(scan.id, "a", 30)
    scans.finish(scan.id)  # the run ending after its cancel: it stays cancelled
    assert scans.get(scan.id).status == CANCELLED
    scans.release("a")
    assert scans.claim("b", 30) is None


def test_claims_at_once_take_each_scan_once(open_scans):
    states = [open_scans(), open_scans()]  # two backends on PostgreSQL; one and the same on SQLite
    made = {new(states[0]).id for _ in range(20)}

    def claim_all(n: int) -> list[str]:
        got = []
        while scan := states[n % 2].claim(f"backend-{n}", 30):
            got.append(scan.id)
        return got

    with ThreadPoolExecutor(4) as pool:
        claimed = [scan_id for got in pool.map(claim_all, range(4)) for scan_id in got]
    assert sorted(claimed) == sorted(made)  # each once, none left


def test_a_restart_of_the_sqlite_state_lets_go_of_its_own_leases(tmp_path):
    """One backend owns a data dir: the leases it finds there are its own from before a crash."""
    from spyglass.server.state.sqlite.scans import ScanStore

    first = ScanStore(tmp_path)
    scan = new(first)
    first.claim("before-the-crash", 3600)
    first.close()
    again = ScanStore(tmp_path)
    assert again.claim("after", 30).id == scan.id
    again.close()


def internet(scans: ScanState, account_id: int = 1, most: int | None = 2):
    return scans.create(
        account_id=account_id, api_key="d", size=1 << 24, spec="{}", probes=1 << 24, internet=True, most=most
    )


def test_internet_scans_under_way_are_counted_where_one_is_written(scans):
    """Issue 44: any account could start any number of internet scans, each over every allowed
    network. Those not yet done or cancelled count; scans of listed addresses do not."""
    first, second = internet(scans), internet(scans)
    new(scans)
    with pytest.raises(OverBudget) as over:
        internet(scans)
    assert over.value.in_use == 2 and scans.of_account(1)[1] == 3  # nothing written
    assert internet(scans, account_id=2).internet  # another account's are its own
    scans.set_status(first.id, CANCELLED)
    internet(scans)
    scans.finish(second.id)
    internet(scans)
    with pytest.raises(OverBudget):
        internet(scans)


def started_at_once(open_scans, start, refused: type[Exception]) -> tuple[int, int]:
    """24 starts on 8 threads, alternating between two states (two backends on PostgreSQL; one and
    the same on SQLite): how many went through, and how many scans the account then holds."""
    states = [open_scans(), open_scans()]

    def one(n: int) -> bool:
        try:
            start(states[n % 2], n)
        except refused:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        started = list(pool.map(one, range(24)))
    return started.count(True), states[1].of_account(1)[1]


def test_internet_scans_started_at_once_never_pass_the_budget(open_scans):
    assert started_at_once(open_scans, lambda state, n: internet(state, most=3), OverBudget) == (3, 3)


def aged(scans: ScanState, hours: float) -> None:
    """Every scan kept as if created ``hours`` earlier (the clock is the state's own)."""
    then = iso(utcnow() - timedelta(hours=hours))
    scans._db.run("UPDATE scans SET created = ?", (then,))  # type: ignore[attr-defined]


def test_scans_started_an_hour_are_counted_where_one_is_written(scans):
    """A loop of free internet scans, each cancelled at once, wrote 18 records a second. Every
    scan started counts, of either kind, cancelled or not; the hour passes, room is made."""
    first = scans.create(account_id=1, api_key="d", size=1, spec="{}", probes=1, per_hour=3)
    scans.set_status(first.id, CANCELLED)
    scans.create(account_id=1, api_key="d", size=1, spec="{}", probes=1, internet=True, per_hour=3)
    new(scans)  # (without per_hour, as before: counted by the others all the same)
    for refused in (
        lambda: scans.create(account_id=1, api_key="d", size=1, spec="{}", probes=1, per_hour=3),
        lambda: scans.create(account_id=1, api_key="d", size=1, spec="{}", probes=1, internet=True, most=5, per_hour=3),
        lambda: scans.hourly_room(1, 3),
    ):
        with pytest.raises(ScansThisHour) as over:
            refused()
        assert 3500 < over.value.wait <= 3600
    assert scans.of_account(1)[1] == 3  # nothing written
    scans.hourly_room(2, 3)  # another account's are its own
    scans.create(account_id=2, api_key="d", size=1, spec="{}", probes=1, per_hour=3)
    aged(scans, 1.01)
    scans.hourly_room(1, 3)
    scans.create(account_id=1, api_key="d", size=1, spec="{}", probes=1, per_hour=3)


def test_scans_started_at_once_never_pass_the_hourly_budget(open_scans):
    def start(state: ScanState, n: int) -> None:
        state.create(account_id=1, api_key="d", size=1, spec="{}", probes=1, internet=n % 3 == 0, per_hour=5)

    assert started_at_once(open_scans, start, ScansThisHour) == (5, 5)


def test_an_accounts_old_done_and_cancelled_scans_are_deleted(scans):
    """An account keeps its latest ``kept`` scans; older ones go when it starts another, unless
    they are unfinished. Another account's are its own."""
    scans.kept = 3  # type: ignore[attr-defined]  (1,000 in service)
    done, cancelled, running = new(scans), new(scans), new(scans)
    scans.finish(done.id)
    scans.set_status(cancelled.id, CANCELLED)
    theirs = new(scans, account_id=2)
    scans.finish(theirs.id)
    aged(scans, 2)
    latest = [new(scans) for _ in range(3)]
    kept, total = scans.of_account(1)
    assert [s.id for s in kept] == [s.id for s in reversed(latest)] + [running.id] and total == 4
    assert scans.get(done.id) is None and scans.get(cancelled.id) is None
    assert scans.of_account(2)[1] == 1


def test_an_accounts_scans_are_listed_a_page_at_a_time(scans):
    made = [new(scans) for _ in range(PAGE * 2 + 5)]
    new(scans, account_id=2)
    pages = [scans.of_account(1, page) for page in (1, 2, 3, 4)]
    assert [len(found) for found, _ in pages] == [PAGE, PAGE, 5, 0]
    assert {total for _, total in pages} == {len(made)}
    listed = [s.id for found, _ in pages for s in found]
    assert sorted(listed) == sorted(s.id for s in made)  # each once
    assert listed[0] == max(made, key=lambda s: (s.created, s.id)).id  # newest first
