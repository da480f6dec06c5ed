"""Scans on PostgreSQL: the :class:`~spyglass.server.state.scans.ScanState` that several backends
share. A claim takes the oldest claimable scan with ``FOR UPDATE SKIP LOCKED``, so two backends
claiming at once take two different scans (or one takes it and the other none); leases are on the
server's clock, so the backends' clocks need not agree."""

from __future__ import annotations

from spyglass.server.postgres.connect import Pool, holds_nul, row_of
from spyglass.server.postgres.schema import init_schema
from spyglass.server.state import OverBudget
from spyglass.server.state.accounts import iso, utcnow
from spyglass.server.state.scans import (
    CANCELLED,
    DONE,
    PROCESSING,
    QUEUE,
    SUBMITTING,
    UNFINISHED,
    Scan,
    new_scan_id,
    scan_from,
)

LEASE_UNTIL = "now() + make_interval(secs => %s)"


class PostgresScans:
    """Thread-safe (a pool); every write is one statement or one transaction."""

    def __init__(self, url: str) -> None:
        init_schema(url)
        self._pool = Pool(url)

    def close(self) -> None:
        self._pool.close()

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
    ) -> Scan:
        now = iso(utcnow())
        with self._pool.transaction() as db:
            if internet and most is not None:  # the account's lock to the end of the transaction
                db.execute("SELECT pg_advisory_xact_lock(hashtextextended('internet scans ' || %s, 0))", (account_id,))
                under_way = row_of(
                    db.execute(
                        "SELECT count(*) AS n FROM scans WHERE account_id = %s AND internet AND status = ANY(%s)",
                        (account_id, list(UNFINISHED)),
                    )
                )["n"]
                if under_way >= most:
                    raise OverBudget(int(under_way))
            row = row_of(
                db.execute(
                    "INSERT INTO scans (id, account_id, api_key, created, status, status_check, size, spec,"
                    " internet, probes) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING *",
                    (new_scan_id(), account_id, api_key, now, SUBMITTING, now, size, spec, internet, probes),
                )
            )
        return scan_from(row)

    def get(self, scan_id: str) -> Scan | None:
        if holds_nul(scan_id):
            return None
        row = self._pool.one("SELECT * FROM scans WHERE id = %s", (scan_id,))
        return scan_from(row) if row else None

    def of_account(self, account_id: int) -> list[Scan]:
        rows = self._pool.all("SELECT * FROM scans WHERE account_id = %s ORDER BY created DESC", (account_id,))
        return [scan_from(r) for r in rows]

    def set_credits_left(self, scan_id: str, credits_left: int) -> None:
        self._pool.run("UPDATE scans SET credits_left = %s WHERE id = %s", (credits_left, scan_id))

    def set_status(self, scan_id: str, status: str) -> None:
        self._pool.run(
            "UPDATE scans SET status = %s, status_check = %s WHERE id = %s", (status, iso(utcnow()), scan_id)
        )

    def queue(self, scan_id: str) -> None:
        self._pool.run("UPDATE scans SET status = %s WHERE id = %s AND status = %s", (QUEUE, scan_id, SUBMITTING))

    def progress(self, scan_id: str, probed: int, found: int) -> None:
        self._pool.run("UPDATE scans SET probed = %s, found = %s WHERE id = %s", (probed, found, scan_id))

    def finish(self, scan_id: str) -> None:
        self._pool.run(
            "UPDATE scans SET status = CASE WHEN status = %s THEN status ELSE %s END, status_check = %s,"
            " owner = NULL, lease_until = NULL WHERE id = %s",
            (CANCELLED, DONE, iso(utcnow()), scan_id),
        )

    def claim(self, owner: str, lease: float) -> Scan | None:
        row = self._pool.one(
            f"UPDATE scans SET status = %s, status_check = %s, owner = %s, lease_until = {LEASE_UNTIL}"
            " WHERE id = (SELECT id FROM scans WHERE status = ANY(%s)"
            " AND (lease_until IS NULL OR lease_until < now()) ORDER BY created LIMIT 1 FOR UPDATE SKIP LOCKED)"
            " RETURNING *",
            (PROCESSING, iso(utcnow()), owner, lease, list(UNFINISHED)),
        )
        return scan_from(row) if row else None

    def renew(self, scan_id: str, owner: str, lease: float) -> bool:
        row = self._pool.one(
            f"UPDATE scans SET lease_until = {LEASE_UNTIL} WHERE id = %s AND owner = %s AND status = ANY(%s)"
            " RETURNING id",
            (lease, scan_id, owner, list(UNFINISHED)),
        )
        return row is not None

    def release(self, owner: str) -> None:
        self._pool.run("UPDATE scans SET owner = NULL, lease_until = NULL WHERE owner = %s", (owner,))
