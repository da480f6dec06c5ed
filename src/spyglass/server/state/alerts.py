"""Alerts, their triggers, ignored services and notifiers, the accounts' notifiers, the delivery
queue and its log, and collected banners held until matched: what a store of them is
(:class:`AlertState`) and what every implementation shares.

On SQLite (server/state/sqlite/alerts.py) one backend owns the queue. On PostgreSQL (server/state/postgres/)
every backend sharing the state takes deliveries from one queue: :meth:`AlertState.due` claims
them for :data:`LEASE` seconds, renewed while their attempts run, so a delivery is attempted by
one backend at a time and one that dies mid-attempt leaves it to another once its lease ends.
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from spyglass.coverage import pack_spans, spans_of
from spyglass.netblocks import Netblock, network_size
from spyglass.server.state.alertrows import AlertRow, Busy, Delivery, Held, NotifierRow

DEFAULT_NOTIFIER = "default"
PENDING, SENT, FAILED = "pending", "sent", "failed"
DROPPED = "dropped"  # its notifier was deleted before it was sent (kept: its log rows name it)
LEASE = 15.0  # seconds a claimed delivery is another backend's to take over if not renewed
RENEW_EVERY = LEASE / 3  # how often a backend renews the leases of the deliveries it attempts
_ID_CHARS = string.ascii_uppercase + string.digits


def new_id(length: int) -> str:
    return "".join(secrets.choice(_ID_CHARS) for _ in range(length))


@dataclass(frozen=True)
class StoredNetworks:
    """An alert's networks as the state keeps them: their text (JSON, a single address without its
    prefix length), how many addresses they cover (the plan's budget counts them) and their ranges
    packed (what matching reads: no backend parses the networks again). Worked out before a write's
    transaction, not while it holds the state; a large list, in a process of its own (see
    server/alerts/bodies.py)."""

    text: str
    size: int
    spans: bytes

    @classmethod
    def of(cls, networks: list[Netblock]) -> StoredNetworks:
        return cls(json.dumps([str(n) for n in networks]), network_size(networks), pack_spans(spans_of(networks)))


def stored(networks: list[Netblock] | StoredNetworks) -> StoredNetworks:
    return networks if isinstance(networks, StoredNetworks) else StoredNetworks.of(networks)


def alert_from(r: Mapping[str, Any]) -> AlertRow:
    """An alert from its row, without its triggers, ignores and notifiers (read beside it)."""
    spans = r["spans"]
    return AlertRow(
        r["id"], r["account_id"], r["name"], r["created"], r["expires"], json.loads(r["networks"]), r["size"],
        spans=bytes(spans) if spans is not None else None,
    )  # fmt: skip


def notifier_from(r: Mapping[str, Any]) -> NotifierRow:
    return NotifierRow(r["id"], r["account_id"], r["provider"], r["description"], json.loads(r["args"]))


def delivery_from(r: Mapping[str, Any]) -> Delivery:
    return Delivery(
        r["id"], r["event"], r["account_id"], r["alert_id"], r["notifier_id"], json.loads(r["payload"]), r["attempts"]
    )


def held_from(r: Mapping[str, Any]) -> Held:
    return Held(r["id"], [tuple(c) for c in json.loads(r["batch"])], r["held"], r["attempts"])


def log_entry(r: Mapping[str, Any]) -> dict:
    """A delivery log row (joined with its delivery's ``payload``) as the API shows it."""
    payload = json.loads(r["payload"]) if r["payload"] else {}
    return {
        "at": r["at"],
        "event": r["event"],
        "notifier": r["notifier_id"],
        "provider": r["provider"],
        "attempt": r["attempt"],
        "outcome": r["outcome"],
        "detail": r["detail"],
        "service": payload.get("service") or _service_of(r["event"], r["alert_id"]),
        "triggers": payload.get("triggers", []),
    }


def _service_of(event: str, alert_id: str | None) -> str | None:
    """The service an event names (``ALERT:IP:PORT/TRANSPORT:STAMP``): its delivery, which held
    the payload, is gone where its notifier was deleted while it was pending."""
    head = f"{alert_id}:"
    if not alert_id or not event.startswith(head) or "/" not in event:
        return None
    return event.removeprefix(head).split("/", 1)[0] or None


class AlertState(Protocol):
    """What the API, the trigger engine and the delivery worker ask of the alerts. Thread-safe;
    every write is one transaction, committed before it returns. A store whose server is away
    raises :class:`~spyglass.server.banners.store.StoreUnavailable`."""

    clock: Callable[[], datetime]

    def close(self) -> None: ...
    def version(self) -> tuple[int, int]:
        """Moves whenever what :meth:`alerts` returns may have changed, through any backend."""
        ...

    def monitored(self, account_id: int, leaving_out: str | None = None) -> int: ...
    # With a ``budget``, the account's other alerts' addresses are counted and the alert written in
    # one transaction that no other create or edit of the account's, on any backend, interleaves
    # with: :class:`OverBudget` and nothing written past it.
    def create_alert(
        self,
        account_id: int,
        name: str,
        networks: list[Netblock] | StoredNetworks,
        expires: int,
        budget: int | None = None,
    ) -> AlertRow: ...
    def set_networks(
        self,
        account_id: int,
        alert_id: str,
        networks: list[Netblock] | StoredNetworks,
        expires: int | None = None,
        budget: int | None = None,
    ) -> None: ...
    def alert(self, account_id: int, alert_id: str) -> AlertRow | None: ...
    def alerts(self, account_id: int | None = None, *, networks: bool = True) -> list[AlertRow]:
        """The account's alerts (every account's with None), oldest first; not ``networks``: their
        ``networks`` left empty where their ``spans`` are kept (what matching needs)."""
        ...

    def delete_alert(self, account_id: int, alert_id: str) -> bool: ...
    def set_triggers(self, alert_id: str, names: list[str], enabled: bool) -> None: ...
    def set_ignored(self, alert_id: str, trigger: str, service: str, ignored: bool, most: int | None = None) -> None:
        """With ``most``, an ignore past that many of the alert's (all its triggers) is OverBudget,
        counted and written in one transaction; an un-ignore is never refused."""

    def set_attached(self, alert_id: str, notifier_id: str, attached: bool) -> None: ...

    def ensure_default(self, account_id: int, email: str | None) -> None: ...
    def create_notifier(
        self, account_id: int, provider: str, description: str | None, args: dict[str, str], most: int | None = None
    ) -> str:
        """The new notifier's id; with ``most``, counted and written in one transaction as alerts
        are: OverBudget (its ``in_use``: the account's notifiers) and nothing written past it."""

    def update_notifier(
        self, account_id: int, notifier_id: str, description: str | None, args: dict[str, str]
    ) -> None: ...
    def notifier(self, account_id: int, notifier_id: str) -> NotifierRow | None: ...
    def notifiers(self, account_id: int) -> list[NotifierRow]: ...
    def delete_notifier(self, account_id: int, notifier_id: str) -> bool: ...

    def hold(self, batches: list[list[tuple[dict, bool, str]]], now: float) -> None: ...
    def held(self, now: float, limit: int = 20) -> list[Held]: ...
    def next_held(self) -> float | None: ...
    def hold_again(self, held_id: int, next_try: float) -> None: ...
    def held_due(self, now: float) -> None: ...
    def release(self, held_id: int) -> None: ...

    def enqueue(self, items: list[tuple[str, int, str, str, dict]], now: float, release: int | None = None) -> int: ...
    def due(self, now: float, limit: int = 20, *, busy: Busy = ((), (), ())) -> list[Delivery]:
        """Pending deliveries due by ``now``, claimed for this backend (see :data:`LEASE`)."""
        ...

    def next_due(self, *, busy: Busy = ((), (), ())) -> float | None: ...
    def renew(self, delivery_ids: list[int], now: float) -> None:
        """Keep the claims on deliveries whose attempts are still running."""
        ...

    def unclaim(self, delivery_ids: list[int], now: float) -> None:
        """Let go of the claims on deliveries :meth:`due` gave and the worker did not start (their
        notifier's or account's share under way): due again at ``now``."""
        ...

    def record(self, delivery: Delivery, provider: str, outcome: str, detail: str, next_try: float | None) -> None: ...
    def log_test(
        self, account_id: int, notifier_id: str, provider: str, event: str, outcome: str, detail: str
    ) -> None: ...
    def log(self, account_id: int, alert_id: str, limit: int = 50) -> list[dict]: ...
