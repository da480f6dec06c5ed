"""What the alert state hands out (:class:`~spyglass.server.state.alerts.AlertState`): an alert with
its triggers, ignored services and notifiers, a notifier, a queued delivery, a batch of banners held
until matched."""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from spyglass.netblocks import Network


@dataclass
class AlertRow:
    id: str
    account_id: int
    name: str
    created: str
    expires: int
    networks: list[str]
    size: int
    triggers: list[str] = field(default_factory=list)
    ignores: dict[str, list[str]] = field(default_factory=dict)  # trigger -> ["ip:port", ...]
    notifiers: list[str] = field(default_factory=list)

    def expiration(self) -> datetime | None:
        if not self.expires:
            return None
        try:
            return datetime.fromisoformat(self.created) + timedelta(seconds=self.expires)
        except OverflowError:  # past the year 9999 (stored before expires was bounded): never
            return None

    def expired(self, now: datetime) -> bool:
        end = self.expiration()
        return end is not None and now >= end

    def parsed_networks(self, known: Mapping[str, Network] | None = None) -> dict[str, Network]:
        """Its networks by their stored text, each taken from ``known`` (its networks before an
        edit) where it is there: an edit of one of 120,000 networks parses one, not 120,000."""
        known = known or {}
        return {n: known.get(n) or ipaddress.ip_network(n, strict=False) for n in self.networks}


# What the delivery worker has in flight: delivery ids, (account, notifier) pairs, accounts.
Busy = tuple[Collection[int], Collection[tuple[int, str]], Collection[int]]


@dataclass
class NotifierRow:
    id: str
    account_id: int
    provider: str
    description: str | None
    args: dict[str, str]


@dataclass
class Delivery:
    id: int
    event: str
    account_id: int
    alert_id: str
    notifier_id: str
    payload: dict
    attempts: int


@dataclass
class Held:
    """Collected banners held until they are matched: (banner, new_service, source) each."""

    id: int
    batch: list[tuple[dict, bool, str]]
    held: float
    attempts: int
