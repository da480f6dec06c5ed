"""What the alert state hands out (:class:`~spyglass.server.state.alerts.AlertState`): an alert with
its triggers, ignored services and notifiers, a notifier, a queued delivery, a batch of banners held
until matched."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from spyglass.coverage import Spans, spans_of, unpack_spans
from spyglass.netblocks import Netblock, parse_netblock


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
    spans: bytes | None = None  # its networks' ranges, packed (coverage.pack_spans); None in rows before them

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

    def ranges(self) -> Spans:
        """Its networks as coverage spans: unpacked where kept, else made from its networks."""
        if self.spans is not None:
            return unpack_spans(self.spans)
        return spans_of(self.parsed_networks().values())

    def parsed_networks(self, known: Mapping[str, Netblock] | None = None) -> dict[str, Netblock]:
        """Its networks by their stored text, each taken from ``known`` (its networks before an
        edit) where it is there: an edit of one of 120,000 networks parses one, not 120,000."""
        known = known or {}
        return {n: known.get(n) or parse_netblock(n) for n in self.networks}


class AlertSpans:
    """Alerts' networks as coverage spans, kept by alert: made again only for an alert whose
    networks changed, unpacked from the ranges kept with them (or, in a row from before those,
    parsing only the networks new to it). After an edit of one alert the engine and each /alert
    stream build their coverage again; building it from every network of a large alert again came
    ahead of every other account's banners."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[list[str], dict[str, Netblock], Spans]] = {}
        self._unpacked: dict[str, tuple[bytes, Spans]] = {}

    def __call__(self, alert: AlertRow) -> Spans:
        if alert.spans is not None:
            unpacked = self._unpacked.get(alert.id)
            if unpacked is None or unpacked[0] != alert.spans:
                unpacked = self._unpacked[alert.id] = (alert.spans, unpack_spans(alert.spans))
            return unpacked[1]
        kept = self._kept.get(alert.id)
        if kept is None or kept[0] != alert.networks:
            parsed = alert.parsed_networks(kept[1] if kept else None)
            kept = self._kept[alert.id] = (alert.networks, parsed, spans_of(parsed.values()))
        return kept[2]

    def keep_only(self, alert_ids: Collection[str]) -> None:
        """Forget the alerts not in ``alert_ids`` (deleted, or no longer watched)."""
        for kept in (self._kept, self._unpacked):
            for gone in kept.keys() - set(alert_ids):
                del kept[gone]


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
