"""Scans, as every scan state keeps them: what each asked for, whose it is, where it stands, and
which backend runs it.

``probed`` is a watermark: every probe before that position in the spec's order has finished, so a
backend that stops mid-scan resumes there (at most the probes in flight are made again).

A scan is run by the backend that claims it: the claim is a lease, renewed while it runs. A backend
that dies leaves its lease to lapse, and then any backend claims the scan and resumes it. The
SQLite state (scanner/store.py) has one backend; the PostgreSQL one (postgres/scans.py) any number.
"""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from spyglass.server.state.accounts import iso, utcnow

SUBMITTING, QUEUE, PROCESSING, DONE = "SUBMITTING", "QUEUE", "PROCESSING", "DONE"
CANCELLED = "CANCELLED"  # beyond the seed: stopped by its owner; never resumed
UNFINISHED = (SUBMITTING, QUEUE, PROCESSING)
ID_ALPHABET = string.ascii_uppercase + string.digits
PAGE = 100  # scans a page of an account's listing
# An account's latest scans kept: older done or cancelled ones are deleted when it starts another
# (a loop of free internet scans, each cancelled at once, kept 1,000 records in a minute and
# ~500 MB a day). More than any plan's scans an hour, so that those are all still there to count.
KEPT = 1_000


def new_scan_id() -> str:
    return "".join(secrets.choice(ID_ALPHABET) for _ in range(16))


@dataclass(frozen=True)
class Scan:
    id: str
    account_id: int
    api_key: str
    created: str
    status: str
    status_check: str
    size: int
    credits_left: int | None
    spec: str
    internet: bool
    probes: int
    probed: int
    found: int

    def status_body(self) -> dict:
        """The seed's status response, plus progress members clients may ignore."""
        return {
            "id": self.id,
            "count": self.size,
            "status": self.status,
            "created": self.created,
            "probes": self.probes,
            "probed": self.probed,
            "found": self.found,
        }

    def listing_item(self, key: str) -> dict:
        """As the listing shows it to the account, with ``key``, the one it called with."""
        return {
            "id": self.id,
            "status": self.status,
            "created": self.created,
            "status_check": self.status_check,
            "credits_left": self.credits_left,
            "api_key": key,
            "size": self.size,
            "probes": self.probes,
            "probed": self.probed,
            "found": self.found,
        }


class ScansThisHour(Exception):
    """Nothing was written: the account started its plan's scans an hour within the last hour
    (``wait``: seconds until the oldest of those is an hour old)."""

    def __init__(self, wait: float) -> None:
        super().__init__(wait)
        self.wait = wait


def hour_ago() -> str:
    """An hour before now, as a scan's ``created`` is written (they sort as text)."""
    return iso(utcnow() - timedelta(hours=1))


def check_hourly(per_hour: int, started: int, oldest: str | None) -> None:
    """ScansThisHour unless one more fits beside the ``started`` scans of the last hour, the
    oldest of them created at ``oldest``."""
    if started >= per_hour:
        then = datetime.fromisoformat(oldest) if oldest else utcnow()
        raise ScansThisHour((then + timedelta(hours=1) - utcnow()).total_seconds())


def scan_from(row: Any) -> Scan:
    """A scan from a row of either state (a mapping of the columns; the lease columns are the
    state's own business)."""
    values = {name: row[name] for name in Scan.__dataclass_fields__}
    return Scan(**{**values, "internet": bool(values["internet"])})


class ScanState(Protocol):
    """Where scans are kept. Every method is safe from any thread."""

    def close(self) -> None: ...

    def create(
        self,
        *,
        account_id: int,
        api_key: str,
        size: int,
        spec: str,
        probes: int,
        internet: bool = False,
        most: int | None = None,
        per_hour: int | None = None,
    ) -> Scan:
        """A new SUBMITTING scan. An internet scan with ``most``: OverBudget (its ``in_use``: the
        account's unfinished internet scans) and nothing written where it has ``most`` already.
        With ``per_hour``: ScansThisHour and nothing written where the account started that many
        (of any kind, cancelled ones too) within the hour. Each is counted and written in one
        transaction, so creates at once on any number of backends never pass it. The account's
        done and cancelled scans past its latest KEPT are deleted."""

    def hourly_room(self, account_id: int, per_hour: int) -> None:
        """ScansThisHour where :meth:`create` would refuse for ``per_hour`` now (it writes nothing:
        asked before credits are spent)."""

    def get(self, scan_id: str) -> Scan | None: ...

    def of_account(self, account_id: int, page: int = 1) -> tuple[list[Scan], int]:
        """A page (PAGE scans, newest first) of the account's scans, and how many it has."""

    def set_credits_left(self, scan_id: str, credits_left: int) -> None: ...

    def set_status(self, scan_id: str, status: str) -> None: ...

    def queue(self, scan_id: str) -> None:
        """SUBMITTING becomes QUEUE (a scan claimed meanwhile keeps its status)."""

    def progress(self, scan_id: str, probed: int, found: int) -> None: ...

    def finish(self, scan_id: str) -> None:
        """DONE, and its lease let go; a CANCELLED scan stays CANCELLED."""

    def claim(self, owner: str, lease: float) -> Scan | None:
        """The oldest unfinished scan that no live lease holds, now PROCESSING and held by ``owner``
        for ``lease`` seconds; None when there is none. Two backends never claim the same one."""

    def renew(self, scan_id: str, owner: str, lease: float) -> bool:
        """Hold the scan ``lease`` seconds more: False when ``owner`` runs it no longer (it was
        cancelled, finished, or its lease lapsed and another claimed it)."""

    def release(self, owner: str) -> None:
        """Let go of every lease ``owner`` holds (a backend stopping): others claim those at once."""
