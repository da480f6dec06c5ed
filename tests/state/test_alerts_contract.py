"""What the API, the trigger engine and the delivery worker ask of the alert state, on SQLite and
on PostgreSQL alike; and, on PostgreSQL, the delivery queue that several backends share."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from spyglass.netblocks import parse_netblock
from spyglass.server.state import OverBudget
from spyglass.server.state.alerts import DEFAULT_NOTIFIER, LEASE
from spyglass.server.state.postgres.alerts import PostgresAlerts

NETS = [parse_netblock("198.51.100.0/24"), parse_netblock("192.0.2.7/32")]


def item(event: str, alert_id: str, notifier: str = "N1", account: int = 1) -> tuple[str, int, str, str, dict]:
    return event, account, alert_id, notifier, {"event": event, "service": "192.0.2.7:80", "triggers": ["t"]}


def written_of_24_at_once(write, room: int = 5) -> int:
    """How many of 24 writes ``write(n)``, 24 threads at once, got through; each refusal is an
    OverBudget that says ``room`` were in use."""

    def attempt(n: int) -> bool:
        try:
            write(n)
        except OverBudget as exc:
            assert exc.in_use == room
            return False
        return True

    with ThreadPoolExecutor(24) as pool:
        return list(pool.map(attempt, range(24))).count(True)


def test_alerts_with_triggers_ignores_and_notifiers(open_alerts):
    alerts = open_alerts()
    other = open_alerts()  # a second backend's connection: it sees every write, its version moves
    before = other.version()
    alert = alerts.create_alert(1, "office", NETS, 0)
    assert (alert.networks, alert.size, alert.account_id) == (["198.51.100.0/24", "192.0.2.7"], 257, 1)
    assert other.version() != before
    alerts.set_triggers(alert.id, ["malware", "open_database", "malware"], True)
    alerts.set_ignored(alert.id, "malware", "192.0.2.7:80", True)
    notifier = alerts.create_notifier(1, "webhook", "hook", {"url": "http://127.0.0.1:9/x"})
    alerts.set_attached(alert.id, notifier, True)
    seen = other.alert(1, alert.id)
    assert seen is not None and seen.triggers == ["malware", "open_database"]
    assert seen.ignores == {"malware": ["192.0.2.7:80"]} and seen.notifiers == [notifier]
    assert other.alert(2, alert.id) is None and other.alerts(2) == [] and [a.id for a in other.alerts()] == [alert.id]
    second = alerts.create_alert(1, "lab", NETS[1:], 60)
    assert alerts.monitored(1) == 258 and alerts.monitored(1, leaving_out=alert.id) == 1
    alerts.set_networks(1, second.id, NETS[:1], expires=120)
    assert (other.alert(1, second.id).size, other.alert(1, second.id).expires) == (256, 120)
    alerts.set_triggers(alert.id, ["malware"], False)
    alerts.set_ignored(alert.id, "malware", "192.0.2.7:80", False)
    assert other.alert(1, alert.id).triggers == ["open_database"] and other.alert(1, alert.id).ignores == {}
    version = other.version()
    assert alerts.delete_alert(1, alert.id) and not alerts.delete_alert(1, alert.id)
    assert other.version() != version and [a.id for a in other.alerts(1)] == [second.id]


def test_the_budget_holds_under_concurrent_creates_and_edits_from_several_backends(open_alerts):
    """A member plan (16 addresses) ended up watching 432 across two PostgreSQL backends and 48 on
    SQLite: the budget was read before, and apart from, the write. 24 creates of 8 addresses at
    once through three connections (three backends) leave exactly two."""
    backends = [open_alerts() for _ in range(3)]
    eight = [parse_netblock("198.51.100.0/29")]

    def create(n: int) -> bool:
        try:
            backends[n % 3].create_alert(1, f"a{n}", eight, 0, budget=16)
        except OverBudget as exc:
            assert exc.in_use in (8, 16)
            return False
        return True

    with ThreadPoolExecutor(24) as pool:
        made = list(pool.map(create, range(24)))
    assert made.count(True) == 2 and backends[0].monitored(1) == 16
    backends[1].create_alert(2, "another account", eight, 0, budget=16)  # its own budget
    first, second = backends[2].alerts(1)

    def grow(n: int) -> bool:  # each of two edits alone fits beside the other alert's 8; not both
        try:
            backends[n % 3].set_networks(1, (first, second)[n % 2].id, [parse_netblock("198.51.100.0/28")], budget=24)
        except OverBudget:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        grown = list(pool.map(grow, range(8)))
    assert backends[0].monitored(1) <= 24 and any(grown)


def test_notifiers_are_counted_in_the_creating_transaction(open_alerts):
    """A free key made 2,479 notifiers in 30 s: 24 creates at once through three connections (three
    backends) with room for 5 leave 5."""
    backends = [open_alerts() for _ in range(3)]
    create = lambda n: backends[n % 3].create_notifier(1, "webhook", None, {"url": f"http://127.0.0.1:9/{n}"}, most=5)  # noqa: E731
    assert written_of_24_at_once(create) == 5
    assert len(backends[0].notifiers(1)) == 5 and backends[1].create_notifier(2, "webhook", None, {"url": "x"}, most=5)


def test_notifiers(open_alerts):
    alerts = open_alerts()
    alerts.ensure_default(1, "a@example.test")
    alerts.ensure_default(1, "other@example.test")  # there already: kept as it was
    made = alerts.create_notifier(1, "webhook", None, {"url": "http://127.0.0.1:9/x"})
    assert [n.id for n in alerts.notifiers(1)] == [DEFAULT_NOTIFIER, made]
    assert alerts.notifier(1, DEFAULT_NOTIFIER).args == {"to": "a@example.test"}
    alerts.update_notifier(1, made, "moved", {"url": "http://127.0.0.1:9/y"})
    changed = open_alerts().notifier(1, made)
    assert (changed.description, changed.args, changed.provider) == (
        "moved",
        {"url": "http://127.0.0.1:9/y"},
        "webhook",
    )
    assert alerts.notifier(2, made) is None and alerts.notifiers(2) == []
    alert = alerts.create_alert(1, "a", NETS, 0)
    alerts.set_attached(alert.id, made, True)
    alerts.enqueue([item("e1", alert.id, made)], time.time())
    assert alerts.delete_notifier(1, made) and not alerts.delete_notifier(1, made)
    assert alerts.alert(1, alert.id).notifiers == [] and alerts.due(time.time()) == []  # its queue went too


def test_the_queue_and_its_log(open_alerts):
    alerts = open_alerts()
    alert = alerts.create_alert(1, "a", NETS, 0)
    now = time.time()
    assert alerts.enqueue([item("e1", alert.id), item("e2", alert.id)], now) == 2
    assert alerts.enqueue([item("e1", alert.id)], now) == 0  # queued once per event and notifier
    assert alerts.next_due() == pytest.approx(now)
    first, second = alerts.due(now)
    assert (first.event, second.event, first.attempts) == ("e1", "e2", 0) and first.payload["service"] == "192.0.2.7:80"
    alerts.record(first, "webhook", "sent", "200", None)
    alerts.record(second, "webhook", "retry", "503", now + 60)
    assert alerts.due(now + 30, busy=((), (), ())) == []
    (again,) = alerts.due(now + 61)
    assert (again.id, again.attempts) == (second.id, 1)
    alerts.record(again, "webhook", "failed", "gone", None)
    alerts.log_test(1, "N1", "webhook", "test-1", "sent", "200")
    log = open_alerts().log(1, alert.id)
    assert [(e["event"], e["attempt"], e["outcome"]) for e in log] == [
        ("e2", 2, "failed"),
        ("e2", 1, "retry"),
        ("e1", 1, "sent"),
    ]
    assert log[0]["service"] == "192.0.2.7:80" and log[0]["triggers"] == ["t"] and alerts.log(2, alert.id) == []
    assert alerts.due(now + 10_000) == [] and alerts.next_due() is None


def test_what_is_in_flight_is_left_out(open_alerts):
    alerts = open_alerts()
    alert = alerts.create_alert(1, "a", NETS, 0)
    now = time.time()
    alerts.enqueue([item("e1", alert.id, "N1"), item("e2", alert.id, "N2"), item("e3", alert.id, "N3", account=2)], now)
    busy = ({-1}, {(1, "N1")}, {2})
    assert [d.event for d in alerts.due(now, busy=busy)] == ["e2"]


def test_held_banners(open_alerts):
    alerts = open_alerts()
    now = time.time()
    alerts.hold([[], [({"ip_str": "192.0.2.7", "port": 80}, True, "scan")]], now)
    (held,) = alerts.held(now)
    assert held.batch == [({"ip_str": "192.0.2.7", "port": 80}, True, "scan")] and held.attempts == 0
    alerts.hold_again(held.id, now + 30)
    assert alerts.held(now) == [] and alerts.next_held() == pytest.approx(now + 30)
    alerts.held_due(now)
    (again,) = open_alerts().held(now)
    assert again.attempts == 1
    alert = alerts.create_alert(1, "a", NETS, 0)
    assert alerts.enqueue([item("e1", alert.id)], now, release=held.id) == 1
    assert alerts.held(now + 60) == [] and alerts.next_held() is None


@pytest.fixture
def shared(postgres_url):
    """Opens another backend's connection to one PostgreSQL alert state (an embedded queue has
    one backend: nothing there is claimed)."""
    opened: list[PostgresAlerts] = []

    def open_() -> PostgresAlerts:
        opened.append(PostgresAlerts(postgres_url))
        return opened[-1]

    yield open_
    for alerts in opened:
        alerts.close()


def test_a_claimed_delivery_is_no_other_backends_until_its_lease_ends(shared):
    a, b = shared(), shared()
    alert = a.create_alert(1, "a", NETS, 0)
    now = time.time()
    a.enqueue([item("e1", alert.id)], now)
    (claimed,) = a.due(now)
    assert b.due(now) == [] and b.due(now + LEASE - 1) == []
    assert b.next_due() == pytest.approx(now + LEASE)  # when the other looks again
    a.renew([claimed.id], now + LEASE - 1)  # still attempting: the lease is renewed
    assert b.due(now + LEASE + 1) == []
    (taken,) = b.due(now + 2 * LEASE)  # a stopped renewing (it died): b takes it over
    assert (taken.id, taken.event, taken.attempts) == (claimed.id, "e1", 0)
    b.record(taken, "webhook", "sent", "200", None)
    a.renew([claimed.id], now + 2 * LEASE)  # a late renewal does not bring a sent delivery back
    assert a.due(now + 10 * LEASE) == [] and b.due(now + 10 * LEASE) == []


def test_each_delivery_is_claimed_once_by_backends_claiming_at_once(shared):
    backends = [shared(), shared()]
    alert = backends[0].create_alert(1, "a", NETS, 0)
    now = time.time()
    backends[0].enqueue([item(f"e{i}", alert.id, f"N{i}") for i in range(200)], now)

    def claim(n: int) -> list[int]:
        return [d.id for d in backends[n % 2].due(now, limit=7)]

    with ThreadPoolExecutor(16) as pool:
        claimed = [i for ids in pool.map(claim, range(64)) for i in ids]
    assert len(claimed) == len(set(claimed)) == 200


def test_an_alerts_ignores_are_counted_in_the_writing_transaction(open_alerts):
    """One account wrote 17,761 ignores to one alert in 10 minutes, each write slower (attacker
    trial, major 2): 24 ignores at once through three backends with room for 5 leave 5; one
    already there, and an un-ignore, are never refused."""
    backends = [open_alerts() for _ in range(3)]
    alert = backends[0].create_alert(1, "office", NETS, 0)

    ignore = lambda n: backends[n % 3].set_ignored(alert.id, "any", f"198.51.100.{n}:80", True, most=5)  # noqa: E731
    assert written_of_24_at_once(ignore) == 5
    kept = backends[1].alert(1, alert.id).ignores["any"]
    assert len(kept) == 5
    backends[2].set_ignored(alert.id, "any", kept[0], True, most=5)  # there already: not refused
    backends[2].set_ignored(alert.id, "any", kept[0], False, most=5)
    backends[0].set_ignored(alert.id, "uncommon", "198.51.100.99:80", True, most=5)  # room again
    with pytest.raises(OverBudget):
        backends[0].set_ignored(alert.id, "malware", "198.51.100.98:80", True, most=5)


def test_a_log_row_never_takes_another_deliverys_payload(open_alerts):
    """Newcomer trial 20, critical: a pending delivery deleted with its notifier left its log rows
    pointing at its id, which SQLite gave to the next delivery queued, another account's: the log
    showed that account's (private) service. A row whose delivery is gone names the service of its
    event, and never another's."""
    alerts = open_alerts()
    mine = alerts.create_alert(1, "mine", NETS, 0)
    theirs = alerts.create_alert(2, "theirs", NETS, 0)
    dead = alerts.create_notifier(1, "webhook", None, {"url": "http://127.0.0.1:1/"})
    now = time.time()
    event = f"{mine.id}:192.0.2.7:80/tcp:2026-11-30T16:16:13.000000"
    alerts.enqueue([item(event, mine.id, dead)], now)
    (pending,) = alerts.due(now)
    alerts.record(pending, "webhook", "retry", "refused", now + 60)  # still pending, then deleted with it
    assert alerts.delete_notifier(1, dead)
    other = f"{theirs.id}:198.51.100.9:8443/tcp:2026-11-30T16:25:24.000000"
    private = (other, 2, theirs.id, "N2", {"event": other, "service": "198.51.100.9:8443", "triggers": ["any"]})
    alerts.enqueue([private], now)
    (queued,) = alerts.due(now)
    alerts.record(queued, "webhook", "sent", "200", None)
    dropped, tried = alerts.log(1, mine.id)  # newest first: its end said (newcomer trial 21), then its try
    assert (dropped["outcome"], dropped["attempt"], dropped["notifier"]) == ("dropped", 1, dead)
    for row in (dropped, tried):  # what it was about, kept (trial 21: the triggers were lost)
        assert (row["event"], row["service"], row["triggers"]) == (event, "192.0.2.7:80", ["t"])


def test_the_outcome_of_a_delivery_deleted_in_flight_marks_no_other(open_alerts):
    """The same id given again (SQLite): the outcome of an attempt whose delivery was deleted with
    its notifier meanwhile must not mark the delivery that took its id as sent."""
    alerts = open_alerts()
    mine = alerts.create_alert(1, "mine", NETS, 0)
    theirs = alerts.create_alert(2, "theirs", NETS, 0)
    dead = alerts.create_notifier(1, "webhook", None, {"url": "http://127.0.0.1:1/"})
    now = time.time()
    alerts.enqueue([item(f"{mine.id}:192.0.2.7:80/tcp:1", mine.id, dead)], now)
    (in_flight,) = alerts.due(now)
    assert alerts.delete_notifier(1, dead)  # while its attempt runs
    alerts.enqueue([item(f"{theirs.id}:198.51.100.9:8443/tcp:2", theirs.id, "N2", account=2)], now)
    alerts.record(in_flight, "webhook", "sent", "200", None)
    (waiting,) = alerts.due(now)  # still to be sent
    assert waiting.account_id == 2 and waiting.attempts == 0
