"""Bulk data: daily and monthly exports of the banner index, as the original service publishes them.

A file holds the banners whose timestamp falls in its day (``daily/2025-06-01.json.gz``) or month
(``monthly/2025-06.json.gz``): one JSON banner per line, each exactly as the record store holds
it, gzip, oldest first: the format ``spyglass import`` reads. :class:`DatasetService` keeps them
current in a thread of its own:

- it catalogues every banner of the record store it has not seen (by ``seq``) under its day, in
  ``<data_dir>/datasets.db``, and marks that day and its month stale;
- it rebuilds the stale files, each written to a temporary name, synced and renamed, so a listed
  file is always complete, and only then lists it;
- the day and the month under way (by the backend's clock, UTC) are neither built nor listed until
  they end: a file of part of a day, listed under the day's name and rebuilt as banners arrived,
  changed its SHA-1 between listings, and a client that fetches each name once kept a part day.

gzip is written with mtime 0: rebuilding unchanged content gives the same bytes and SHA-1, so a
download interrupted across a rebuild still resumes (clients send ``If-Range`` with the SHA-1).
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from spyglass.models import Dataset
from spyglass.server.banners.store import BannerStore
from spyglass.server.scanner.private import private_body
from spyglass.server.state.sqlite.database import Database

log = logging.getLogger("spyglass.datasets")

DATASETS = {
    "daily": Dataset(name="daily", scope="daily", description="All banners collected during a day"),
    "monthly": Dataset(name="monthly", scope="monthly", description="All banners collected during a month"),
}
PERIOD_LENGTH = {"daily": 10, "monthly": 7}  # the timestamp's prefix that names a file: YYYY-MM-DD, YYYY-MM
SUFFIX = ".json.gz"
POLL = 30.0  # seconds between looks at the record store (another process may import into it)
PAUSE = 2.0  # seconds at least between passes: a busy collector does not rebuild a month per batch
BATCH = 2000  # banners read from the record store at a time
# After each batch or file the thread rests this many times as long as it worked: building the
# files of a large data dir takes longer, and searches answer meanwhile as if it were not there
# (the thread shares the interpreter with the requests).
REST = 3.0

MIGRATIONS = (
    """
    -- every banner of the record store this service has seen, by the day of its timestamp
    CREATE TABLE catalogue (day TEXT NOT NULL, stamp TEXT NOT NULL, seq INTEGER NOT NULL,
                            PRIMARY KEY (day, stamp, seq)) WITHOUT ROWID;
    -- files to (re)build: their period gained banners
    CREATE TABLE stale (dataset TEXT NOT NULL, period TEXT NOT NULL, PRIMARY KEY (dataset, period)) WITHOUT ROWID;
    -- the complete files, as listed
    CREATE TABLE files (dataset TEXT NOT NULL, period TEXT NOT NULL, name TEXT NOT NULL, size INTEGER NOT NULL,
                        sha1 TEXT NOT NULL, timestamp INTEGER NOT NULL, banners INTEGER NOT NULL,
                        PRIMARY KEY (dataset, period)) WITHOUT ROWID;
    CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
)


@dataclass(frozen=True)
class BuiltFile:
    dataset: str
    name: str
    size: int
    sha1: str
    timestamp: int  # epoch milliseconds of the build
    banners: int


class _Hashing:
    """A write-only file that counts and hashes what goes through it (the compressed bytes)."""

    def __init__(self, raw) -> None:
        self.raw, self.sha1, self.size = raw, hashlib.sha1(), 0

    def write(self, data) -> int:
        self.sha1.update(data)
        self.size += len(data)
        return self.raw.write(data)

    def flush(self) -> None:
        self.raw.flush()


class DatasetService:
    """The background service (``start``/``stop``) that produces the files, and their listing."""

    def __init__(
        self,
        data_dir: Path,
        banners: BannerStore,
        clock: Callable[[], float] = time.time,
        build_files: bool = True,
    ) -> None:
        self.root = Path(data_dir) / "datasets"
        self.banners = banners
        self.clock = clock
        self.build_files = build_files  # False: the service lists the files already built and builds none
        # NORMAL: the files table is rebuilt from the record store if a crash loses its end.
        self._db = Database(Path(data_dir) / "datasets.db", synchronous="NORMAL", migrations=MIGRATIONS, rows=False)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the service -------------------------------------------------------------------------
    async def start(self) -> None:
        if not self.build_files:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="datasets", daemon=True)
        self._thread.start()

    async def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join)
            self._thread = None
        self.close()

    def close(self) -> None:
        self._db.close()

    def wake(self) -> None:
        """New banners may be in the record store (never blocks: callable from the event loop)."""
        self._wake.set()

    def _run(self) -> None:
        try:
            self.recover()
        except Exception:
            log.exception("checking the bulk data files failed")
        while not self._stop.is_set():
            try:
                self.catch_up()
            except Exception:  # never lose the thread: the next wake or poll tries again
                log.exception("producing bulk data files failed")
            self._wake.wait(POLL)
            self._stop.wait(PAUSE)
            self._wake.clear()

    def catch_up(self) -> None:
        """Catalogue the banners not seen yet and rebuild the files they made stale (blocking)."""
        self.catalogue()
        self.build_stale()

    def recover(self) -> None:
        """After a crash or a hand-deleted file: drop temporary files, rebuild listed files that are gone."""
        for temp in self.root.glob("*/.*.partial"):
            temp.unlink(missing_ok=True)
        gone = [
            (f.dataset, f.name.removesuffix(SUFFIX))
            for name in DATASETS
            for f in self._files(name)
            if not self.path(f).exists()
        ]
        if gone:
            with self._db.transaction() as db:
                db.executemany("INSERT OR IGNORE INTO stale (dataset, period) VALUES (?,?)", gone)

    # -- cataloguing ---------------------------------------------------------------------------
    def catalogued_seq(self) -> int:
        row = self._db.one("SELECT value FROM meta WHERE name = 'catalogued_seq'")
        return int(row[0]) if row else 0

    def under_way(self) -> dict[str, str]:
        """The period of each dataset that has not ended yet (today, this month), by the clock."""
        now = datetime.fromtimestamp(self.clock(), UTC).strftime("%Y-%m-%d")
        return {name: now[:length] for name, length in PERIOD_LENGTH.items()}

    def _stale(self) -> list[tuple[str, str]]:
        """The files to build now: those of periods under way wait for their end."""
        under_way = self.under_way()
        rows = self._db.read("SELECT dataset, period FROM stale ORDER BY period DESC, dataset")
        return [(dataset, period) for dataset, period in rows if period != under_way.get(dataset)]

    def behind(self) -> bool:
        """Whether banners or files are still to be produced."""
        if self.banners.last_mark() > self.catalogued_seq():
            return True
        return bool(self._stale())

    def _rest(self, since: float) -> None:
        self._stop.wait(min(1.0, (time.monotonic() - since) * REST))

    def catalogue(self) -> None:
        started = time.monotonic()
        for batch in self.banners.added_since(self.catalogued_seq(), BATCH):
            rows: list[tuple[str, str, int]] = []
            stale: set[tuple[str, str]] = set()
            for seq, stamp in batch:
                rows.append((stamp[:10], stamp, seq))
                stale.update((name, stamp[:length]) for name, length in PERIOD_LENGTH.items())
            with self._db.transaction() as db:
                db.executemany("INSERT OR IGNORE INTO catalogue (day, stamp, seq) VALUES (?,?,?)", rows)
                db.executemany("INSERT OR IGNORE INTO stale (dataset, period) VALUES (?,?)", sorted(stale))
                db.execute(
                    "INSERT OR REPLACE INTO meta (name, value) VALUES ('catalogued_seq', ?)", (str(batch[-1][0]),)
                )
            if self._stop.is_set():
                return
            self._rest(started)
            started = time.monotonic()

    # -- building ------------------------------------------------------------------------------
    def build_stale(self) -> None:
        for dataset, period in self._stale():
            if self._stop.is_set():
                return
            started = time.monotonic()
            self.build(dataset, period)
            self._rest(started)

    def _seqs(self, period: str) -> list[int]:
        """The period's banners, oldest first (a day, or every day of a month)."""
        rows = self._db.read(
            "SELECT seq FROM catalogue WHERE day >= ? AND day < ? ORDER BY stamp, seq", (period, period + "~")
        )
        return [r[0] for r in rows]

    def build(self, dataset: str, period: str) -> BuiltFile:
        """Write one file under a temporary name, sync it, rename it, then list it."""
        name = period + SUFFIX
        folder = self.root / dataset
        folder.mkdir(parents=True, exist_ok=True)
        final, temp = folder / name, folder / f".{name}.partial"
        seqs, written = self._seqs(period), 0
        with open(temp, "wb") as raw:
            out = _Hashing(raw)
            with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=6, mtime=0) as gz:
                for i in range(0, len(seqs), BATCH):
                    bodies = self.banners.raw_bodies(seqs[i : i + BATCH])
                    # a scan of the server's own networks: its account's alone, in no download
                    kept = [bodies[s] for s in seqs[i : i + BATCH] if s in bodies and not private_body(bodies[s])]
                    gz.write(b"".join(body + b"\n" for body in kept))
                    written += len(kept)
            raw.flush()
            os.fsync(raw.fileno())
        sha1 = out.sha1.hexdigest()
        old = self._file(dataset, name)
        if old is not None and old.sha1 == sha1 and final.exists():
            temp.unlink()  # the same bytes: keep the listed file (and its timestamp) as it is
            built = old
        else:
            os.replace(temp, final)
            built = BuiltFile(dataset, name, out.size, sha1, int(self.clock() * 1000), written)
        with self._db.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO files (dataset, period, name, size, sha1, timestamp, banners)"
                " VALUES (?,?,?,?,?,?,?)",
                (dataset, period, name, built.size, built.sha1, built.timestamp, built.banners),
            )
            db.execute("DELETE FROM stale WHERE dataset = ? AND period = ?", (dataset, period))
        return built

    # -- listing -------------------------------------------------------------------------------
    def files(self, dataset: str) -> list[BuiltFile]:
        """The dataset's files of periods that have ended, newest first (one built before its
        period ended, by an older version, waits for that end too)."""
        under_way = self.under_way().get(dataset)
        return [f for f in self._files(dataset) if f.name.removesuffix(SUFFIX) != under_way]

    def file(self, dataset: str, name: str) -> BuiltFile | None:
        """A listed file: never one of a period under way."""
        return next((f for f in self.files(dataset) if f.name == name), None)

    def _files(self, dataset: str) -> list[BuiltFile]:
        rows = self._db.read(
            "SELECT dataset, name, size, sha1, timestamp, banners FROM files WHERE dataset = ? ORDER BY period DESC",
            (dataset,),
        )
        return [BuiltFile(*row) for row in rows]

    def _file(self, dataset: str, name: str) -> BuiltFile | None:
        row = self._db.one(
            "SELECT dataset, name, size, sha1, timestamp, banners FROM files WHERE dataset = ? AND name = ?",
            (dataset, name),
        )
        return BuiltFile(*row) if row else None

    def path(self, built: BuiltFile) -> Path:
        return self.root / built.dataset / built.name

    async def settled(self, timeout: float) -> bool:
        """Wait (without blocking the loop) up to ``timeout`` s for the files to catch up with
        the record store; whether they did."""
        deadline = time.monotonic() + timeout
        while await asyncio.to_thread(self.behind):
            if time.monotonic() >= deadline:
                return False
            self.wake()
            await asyncio.sleep(0.05)
        return True
