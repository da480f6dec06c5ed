"""The durable record store of banners: SQLite, one body per banner (compressed: see codec.py).

``seq`` numbers banners in the order they arrived (the search index refers to them by it);
``key`` identifies a banner (address, port, transport, time, hash) so a re-import adds nothing.
``services`` maps each service (address, port, transport) to its latest banner: search covers
only those (the index's current flag); older ones stay for host history and trends.

Bodies are the banner's bytes exactly as they came (lossless: integers past 64 bits, any member
of any type); :func:`unpack` reads them back without loss.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import zstandard

from spyglass.exactjson import loads
from spyglass.server.banners.keys import service_key
from spyglass.server.banners.shape import BadBanner, normalize
from spyglass.server.banners.store import Prepared
from spyglass.server.index.codec import FRAME, TRAIN_AFTER, TRAIN_ON, Codec, plain
from spyglass.server.state.sqlite.database import Database, statements

log = logging.getLogger("spyglass.records")

SCHEMA = """
CREATE TABLE IF NOT EXISTS banners (seq INTEGER PRIMARY KEY, key INTEGER NOT NULL UNIQUE, body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
-- the latest banner of each service (address, port, transport): the one search sees
CREATE TABLE IF NOT EXISTS services (service INTEGER PRIMARY KEY, seq INTEGER NOT NULL, stamp TEXT NOT NULL);
-- banners that stopped being current since the index last committed (it must re-index them)
CREATE TABLE IF NOT EXISTS demoted (seq INTEGER PRIMARY KEY);
"""


def _layout_1(db: sqlite3.Connection) -> None:
    """The services and demoted tables. A data dir of the first release (version 0) had every
    banner searchable: the latest of each service becomes its current one."""
    for statement in statements(SCHEMA):
        db.execute(statement)
    latest: dict[int, tuple[str, int]] = {}
    for seq, body in db.execute("SELECT seq, body FROM banners ORDER BY seq"):
        try:
            banner = unpack(body)
            shape = normalize(banner)
        except (BadBanner, ValueError):
            continue
        service = service_key(banner, shape)
        if service not in latest or shape.stamp >= latest[service][0]:
            latest[service] = (shape.stamp, seq)
    db.executemany(
        "INSERT OR REPLACE INTO services (service, seq, stamp) VALUES (?, ?, ?)",
        ((sv, seq, stamp) for sv, (stamp, seq) in latest.items()),
    )


# The zstd dictionary of the bodies (codec.py), trained on the first banners the store holds.
_LAYOUT_2 = "CREATE TABLE IF NOT EXISTS dictionary (id INTEGER PRIMARY KEY CHECK (id = 1), data BLOB NOT NULL);"

# Which index shard indexes a banner (index/shards.py), kept for each banner and each service's
# current one (a demotion re-indexes it in its shard). The demotions waiting are per shard too: a
# shard's writer applies its own. Every banner of an earlier layout was in the one index, rebuilt
# from these (store.py's SCHEMA_VERSION), as shard 0.
_LAYOUT_3 = """
ALTER TABLE banners ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
ALTER TABLE services ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
DROP TABLE IF EXISTS demoted;
CREATE TABLE demoted (seq INTEGER PRIMARY KEY, shard INTEGER NOT NULL);
DELETE FROM meta WHERE name = 'indexed_seq';
"""

# Which banner demoted each (0: one demoted before this layout, applied at once). A shard's writer
# applies a demotion only once the banner that replaced it is committed in its own shard: applied
# before, the service had no current banner in any shard meanwhile, and a search beside an import
# counted fewer services (newcomer trial 18: 4,553 -> 4,489 -> 4,782 results).
_LAYOUT_4 = "ALTER TABLE demoted ADD COLUMN by_seq INTEGER NOT NULL DEFAULT 0;"

MIGRATIONS = (
    _layout_1,
    _LAYOUT_2,
    _LAYOUT_3,
    _LAYOUT_4,
)  # banners.db's PRAGMA user_version: the steps server/state/sqlite/database.py applies


# Page caches (KiB, as PRAGMA cache_size takes them). A bulk load's key index takes random inserts,
# kept off the disk by the cache. 16 MiB loads as fast as 256 MiB did (`spyglass import` of 1 GB
# of nmap XML, 610,000 banners: 45-47 s either way; 300,000 banner lines, 9 s), and the big one
# filled on big imports only, so an import's memory grew with its file (bench/import_scans.py).
# A served store keeps what its reads touched, for as long as it runs: there, a smaller one (its
# reads are bodies by seq, and the OS caches the file too).
BULK_CACHE = -16384
SERVING_CACHE = -8192


def unpack(body: bytes) -> dict:
    """A stored body as it came (integers past 64 bits exact)."""
    return loads(body)


class RecordStore:
    def __init__(self, path: Path) -> None:
        # NORMAL: a committed batch survives the process crashing; an OS crash may lose the last
        # batches, which a re-import restores (bulk data, unlike accounts, can be replayed).
        # queued: an import's workers each write it, in turn (database.py's _WriterQueue), and copy
        # the write-ahead log into the database every 64 MB or so, rather than SQLite's 4 MB (each of
        # its pages once for many batches rather than once for each)
        self._db = Database(path, synchronous="NORMAL", migrations=MIGRATIONS, rows=False, queued=True)
        self._db.conn.execute(f"PRAGMA cache_size={SERVING_CACHE}")
        self._codec: Codec | None = None
        self._codec_now()
        self._train_at = TRAIN_AFTER  # banners stored when a dictionary is next tried
        self._expect_new = True  # whether add may skip looking up the keys it is given

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """The bulk load's page cache while the block runs; the served one again after (what the
        cache held past it is freed)."""
        self._cache(BULK_CACHE)
        try:
            yield
        finally:
            self._cache(SERVING_CACHE)

    def _cache(self, kib: int) -> None:
        with self._db.lock:
            self._db.conn.execute(f"PRAGMA cache_size={kib}")

    def dictionary(self) -> bytes | None:
        """The bodies' zstd dictionary, once the store has one."""
        with self._db.lock:
            codec = self._codec_now()
        return codec.dictionary.as_bytes() if codec else None

    def _codec_now(self) -> Codec | None:
        """The codec, with the dictionary read again while this process has none: another process
        (an import into a data dir a backend serves) may have trained it since. It never changes
        once trained. Call with the lock held."""
        if self._codec is None and (row := self._db.conn.execute("SELECT data FROM dictionary").fetchone()):
            self._codec = Codec(row[0])
        return self._codec

    def _codec_for(self, rows: list) -> Codec | None:
        """The codec to read ``rows`` (seq, body) with; call with the lock held."""
        if self._codec is None and any(b[:1] == FRAME for _, b in rows):
            return self._codec_now()
        return self._codec

    def count(self) -> int:
        with self._db.lock:
            return self._db.conn.execute("SELECT count(*) FROM banners").fetchone()[0]

    def last_seq(self) -> int:
        with self._db.lock:
            return self._db.conn.execute("SELECT coalesce(max(seq), 0) FROM banners").fetchone()[0]

    def get_meta(self, name: str, default: str | None = None) -> str | None:
        with self._db.lock:
            row = self._db.conn.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return row[0] if row else default

    def indexed_seq(self, shard: int) -> int:
        """Shard ``shard`` has committed every banner it indexes up to this seq."""
        return int(self.get_meta(f"indexed_seq:{shard}") or 0)

    def shards(self) -> list[int]:
        """The shards banners were ever given to (each has its mark of what it committed)."""
        rows = self._db.read("SELECT substr(name, 13) FROM meta WHERE name LIKE 'indexed_seq:%'")
        return sorted(int(n) for (n,) in rows if n.isdigit())

    def forget_shards(self) -> None:
        """The index was lost or rebuilt: every banner to shard 0, nothing committed."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM meta WHERE name LIKE 'indexed_seq:%'")
            db.execute("UPDATE banners SET shard = 0 WHERE shard != 0")
            db.execute("UPDATE services SET shard = 0 WHERE shard != 0")
            db.execute("DELETE FROM demoted")
            db.execute("INSERT INTO meta (name, value) VALUES ('indexed_seq:0', '0')")

    def behind(self, shard: int, upto: int) -> bool:
        """Whether shard ``shard`` has banners up to seq ``upto`` it has not committed, or demotions
        to apply. Reads the banners since its mark, and moves the mark up to ``upto`` when it
        lacks none of them: a shard no writer took for a while (the collector's, while imports wrote
        others) was read from its old mark at every look, every banner since: a one-line import
        took seconds beside a backend holding millions (newcomer trial 29)."""
        mark = self.indexed_seq(shard)
        with self._db.lock:
            if self._db.conn.execute("SELECT 1 FROM demoted WHERE shard = ? LIMIT 1", (shard,)).fetchone():
                return True
            found = self._db.conn.execute(
                "SELECT 1 FROM banners WHERE seq > ? AND seq <= ? AND shard = ? LIMIT 1", (mark, upto, shard)
            ).fetchone()
        if found is None and upto > mark:
            # Its banners up to ``upto`` are all at or below its mark: committed. One a writer of
            # it stores meanwhile has a later seq (seqs are given in the write's turn).
            self._move_mark(shard, upto)
        return found is not None

    def _move_mark(self, shard: int, seq: int) -> None:
        with self._db.transaction() as db:
            db.execute(
                "UPDATE meta SET value = ? WHERE name = ? AND CAST(value AS INTEGER) < ?",
                (str(seq), f"indexed_seq:{shard}", seq),
            )

    def set_meta(self, name: str, value: str) -> None:
        with self._db.lock:
            self._db.conn.execute("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", (name, value))

    def add(self, banners: list[Prepared], shard: int = 0) -> tuple[list[tuple[int, bool, Prepared]], list[int]]:
        """Store the banners whose keys are new, in one transaction, as indexed by ``shard``;
        returns ``(seq, current, prepared)`` of those added, and the seqs of the banners of that
        shard they demoted (those of other shards wait for their writers). A banner newer than its
        service's current one replaces it (the old one is recorded as demoted); an older one is
        stored as not current.

        While the batches it is given are new (a first import), their keys are not looked up: the
        key's unique index refuses one it holds, and that batch is stored again, looked up (as are
        the next ones, until one holds no banner the store has)."""
        if self._expect_new:
            try:
                return self._add(banners, shard, look_up=False)
            except sqlite3.IntegrityError:
                pass  # rolled back: a banner the store holds
        return self._add(banners, shard, look_up=True)

    def _add(
        self, banners: list[Prepared], shard: int, look_up: bool
    ) -> tuple[list[tuple[int, bool, Prepared]], list[int]]:
        fresh: dict[int, Prepared] = {}
        packed: list[bytes] | None = None
        if not look_up:  # all new: compressed before the write lock, which every writer waits for
            fresh = self._fresh(banners, set())
            with self._db.lock:
                codec = self._codec_now()
            packed = codec.pack_all([p.body for p in fresh.values()]) if codec else None
        try:
            with self._db.transaction():
                if look_up:
                    known = self._existing("SELECT key FROM banners WHERE key IN ({})", [p.key for p in banners])
                    self._expect_new = not known
                    fresh = self._fresh(banners, known)
                services = list({p.service for p in fresh.values()})
                latest = {
                    sv: (stamp, seq, in_shard)
                    for sv, seq, stamp, in_shard in self._rows(
                        "SELECT service, seq, stamp, shard FROM services WHERE service IN ({})", services
                    )
                }
                seq = self._db.conn.execute("SELECT coalesce(max(seq), 0) FROM banners").fetchone()[0]  # fast: rowid
                if self._codec_now() is None and seq + len(fresh) >= self._train_at:
                    self._train([p.body for p in fresh.values()], seq + len(fresh))
                if packed is None:
                    bodies = [p.body for p in fresh.values()]
                    packed = self._codec.pack_all(bodies) if self._codec else bodies
                first = seq + 1
                added: list[list] = []
                demoted: list[tuple[int, int, int]] = []  # (seq, its shard, the seq that replaced it)
                for p in fresh.values():
                    seq += 1
                    old = latest.get(p.service)
                    current = old is None or p.stamp >= old[0]
                    if current:
                        if old is not None:
                            if old[1] >= first:
                                added[old[1] - first][1] = False  # superseded within this batch
                            else:
                                demoted.append((old[1], old[2], seq))
                        latest[p.service] = (p.stamp, seq, shard)
                    added.append([seq, current, p])
                self._db.conn.executemany(
                    "INSERT INTO banners (seq, key, body, shard) VALUES (?, ?, ?, ?)",
                    ((s, p.key, body, shard) for (s, _, p), body in zip(added, packed, strict=True)),
                )
                self._db.conn.executemany(
                    "INSERT OR REPLACE INTO services (service, seq, stamp, shard) VALUES (?, ?, ?, ?)",
                    ((p.service, s, p.stamp, shard) for s, current, p in added if current),
                )
                self._db.conn.executemany(
                    "INSERT OR IGNORE INTO demoted (seq, shard, by_seq) VALUES (?, ?, ?)", demoted
                )
        except BaseException:
            if self._codec is not None and not self._db.one("SELECT 1 FROM dictionary"):
                self._codec = None  # trained in the transaction that failed: not kept
            raise
        return [(s, current, p) for s, current, p in added], [s for s, in_shard, _ in demoted if in_shard == shard]

    @staticmethod
    def _fresh(banners: list[Prepared], known: set[int]) -> dict[int, Prepared]:
        """The banners whose keys are not ``known``, by key, in their order (a key twice: its first)."""
        fresh: dict[int, Prepared] = {}
        for p in banners:
            if p.key not in known and p.key not in fresh:
                fresh[p.key] = p
        return fresh

    def _train(self, fresh: list[bytes], stored_then: int) -> None:
        """Within add's transaction: the dictionary, from the bodies stored so far and these. If
        zstd cannot learn from them (too few, or too alike), bodies stay plain for now."""
        stored = [plain(b, None) for (b,) in self._db.conn.execute("SELECT body FROM banners LIMIT ?", (TRAIN_ON,))]
        try:
            self._codec = Codec.train(stored + fresh)
        except zstandard.ZstdError as exc:
            log.warning("no dictionary for the banner bodies yet (%s): they stay uncompressed", exc)
            self._train_at = 2 * stored_then
            return
        self._db.conn.execute("INSERT INTO dictionary (id, data) VALUES (1, ?)", (self._codec.dictionary.as_bytes(),))

    def _rows(self, sql: str, values: list) -> list[tuple]:
        rows: list[tuple] = []
        for i in range(0, len(values), 900):
            chunk = values[i : i + 900]
            rows.extend(self._db.conn.execute(sql.format(",".join("?" * len(chunk))), chunk))
        return rows

    def _existing(self, sql: str, values: list) -> set:
        return {r[0] for r in self._rows(sql, values)}

    def known_services(self, services: list[int]) -> set[int]:
        """Of these services, those the store holds a banner of."""
        with self._db.lock:
            return self._existing("SELECT service FROM services WHERE service IN ({})", services)

    def current_seqs(self, services: list[int]) -> set[int]:
        """Of these services, the seqs of their current banners."""
        with self._db.lock:
            return self._existing("SELECT seq FROM services WHERE service IN ({})", services)

    def demoted(self, shard: int | None = None) -> list[int]:
        """The seqs of banners no longer current that shard ``shard`` (or any) must re-index; for a
        shard, those whose replacement another shard has committed already (or its own: they go in
        the same commit). The others wait, still current, for their replacement to be searchable."""
        with self._db.lock:
            if shard is None:
                return [r[0] for r in self._db.conn.execute("SELECT seq FROM demoted ORDER BY seq")]
            return self._replaced("WHERE d.shard = ?", (shard,), shard)

    def replaced(self) -> list[int]:
        """Banners their shard still indexes as current whose replacement another shard has
        committed: search leaves them out, so that a service counts once while the two shards'
        commits are apart (newcomer trial 19: counts above the final one during an import)."""
        with self._db.lock:
            return self._replaced("", (), None)

    def _replaced(self, where: str, values: tuple, own: int | None) -> list[int]:
        rows = self._db.conn.execute(
            "SELECT d.seq, d.by_seq, b.shard FROM demoted d LEFT JOIN banners b ON b.seq = d.by_seq"
            f" {where} ORDER BY d.seq",
            values,
        ).fetchall()
        marks: dict[int, int] = {}
        ready = []
        for seq, by_seq, by_shard in rows:
            if by_shard is not None and by_shard != own:
                if by_shard not in marks:
                    row = self._db.conn.execute("SELECT value FROM meta WHERE name = ?", (f"indexed_seq:{by_shard}",))
                    found = row.fetchone()
                    marks[by_shard] = int(found[0]) if found else 0
                if by_seq > marks[by_shard]:
                    continue
            ready.append(seq)
        return ready

    def demoted_shards(self) -> list[int]:
        """The shards that have demotions to apply."""
        return [r[0] for r in self._db.read("SELECT DISTINCT shard FROM demoted ORDER BY shard")]

    def indexed(self, shard: int, seq: int, demoted: list[int]) -> None:
        """Shard ``shard`` has committed every banner it indexes up to ``seq`` and re-indexed ``demoted``."""
        with self._db.transaction() as db:
            db.executemany("DELETE FROM demoted WHERE seq = ?", ((s,) for s in demoted))
            db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", (f"indexed_seq:{shard}", str(seq)))

    def checkpoint(self) -> None:
        """Move the write-ahead log into the database file, synced (end of a bulk load)."""
        with self._db.lock:
            self._db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def fetch(self, seqs: list[int]) -> list[dict]:
        """The banners with these seqs, in the same order (missing ones are skipped)."""
        if not seqs:
            return []
        rows = self.bodies(seqs)
        return [rows[s] for s in seqs if s in rows]

    def bodies(self, seqs: list[int]) -> dict[int, dict]:
        """The banners with these seqs, by seq, each exactly as it came."""
        with self._db.lock:
            rows = self._rows("SELECT seq, body FROM banners WHERE seq IN ({})", seqs)
            codec = self._codec_for(rows)
        return {s: unpack(plain(b, codec)) for s, b in rows}

    def raw_bodies(self, seqs: list[int]) -> dict[int, bytes]:
        """The stored bytes of these banners, exactly as they came (for writing them out again)."""
        with self._db.lock:
            rows = self._rows("SELECT seq, body FROM banners WHERE seq IN ({})", seqs)
            codec = self._codec_for(rows)
        return {s: plain(b, codec) for s, b in rows}

    def seqs_since(self, after_seq: int, limit: int) -> list[int]:
        with self._db.lock:
            rows = self._db.conn.execute(
                "SELECT seq FROM banners WHERE seq > ? ORDER BY seq LIMIT ?", (after_seq, limit)
            ).fetchall()
        return [seq for (seq,) in rows]

    def since(self, after_seq: int, batch: int = 5000, shard: int | None = None) -> Iterator[list[tuple[int, dict]]]:
        """Every banner with seq > ``after_seq`` (of shard ``shard`` only, if given), in batches,
        for (re)indexing."""
        last = after_seq
        of_shard = "" if shard is None else f"AND shard = {int(shard)}"
        while True:
            with self._db.lock:
                rows = self._db.conn.execute(
                    f"SELECT seq, body FROM banners WHERE seq > ? {of_shard} ORDER BY seq LIMIT ?", (last, batch)
                ).fetchall()
                codec = self._codec_for(rows)
            if not rows:
                return
            yield [(s, unpack(plain(b, codec))) for s, b in rows]
            last = rows[-1][0]
