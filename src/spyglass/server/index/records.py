"""The durable record store of banners: SQLite, one JSON body per banner.

Bodies are stored uncompressed: zlib measured 30-58 us a banner (most of it setting up its
state) for a 1.5-1.8x saving, against an import budget of ~50 us; disk is the cheaper of the two.

``seq`` numbers banners in the order they arrived (the search index refers to them by it);
``key`` identifies a banner (address, port, transport, time, hash) so a re-import adds nothing.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from pathlib import Path

import orjson

from spyglass.server.sqlite import connect

SCHEMA = """
CREATE TABLE IF NOT EXISTS banners (seq INTEGER PRIMARY KEY, key INTEGER NOT NULL UNIQUE, body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def banner_key(b: dict) -> int:
    ident = f"{b['ip_str']}|{b['port']}|{b.get('transport', 'tcp')}|{b['timestamp']}|{b.get('hash')}"
    return int.from_bytes(hashlib.blake2b(ident.encode(), digest_size=8).digest(), "big") >> 1


def pack(b: dict) -> bytes:
    return orjson.dumps(b)


def unpack(body: bytes) -> dict:
    return orjson.loads(body)


class RecordStore:
    def __init__(self, path: Path) -> None:
        self._lock = threading.RLock()
        # NORMAL: a committed batch survives the process crashing; an OS crash may lose the last
        # batches, which a re-import restores (bulk data, unlike accounts, can be replayed).
        self._db = connect(path, synchronous="NORMAL", schema=SCHEMA)
        # The key index takes random inserts: a bigger page cache keeps them off the disk.
        self._db.execute("PRAGMA cache_size=-262144")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT count(*) FROM banners").fetchone()[0]

    def last_seq(self) -> int:
        with self._lock:
            return self._db.execute("SELECT coalesce(max(seq), 0) FROM banners").fetchone()[0]

    def get_meta(self, name: str, default: str | None = None) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return row[0] if row else default

    def set_meta(self, name: str, value: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", (name, value))

    def add(self, banners: list[tuple[int, bytes, bytes]]) -> list[tuple[int, bytes]]:
        """Store the banners whose keys are new, in one transaction.

        Takes ``(key, body, extra)`` triples (the body already serialized); returns
        ``(seq, extra)`` of those added.
        """
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                fresh: dict[int, tuple[bytes, bytes]] = {}
                keys = [k for k, _, _ in banners]
                known: set[int] = set()
                for i in range(0, len(keys), 900):
                    chunk = keys[i:i + 900]
                    known.update(r[0] for r in self._db.execute(
                        f"SELECT key FROM banners WHERE key IN ({','.join('?' * len(chunk))})", chunk))
                for key, body, extra in banners:
                    if key not in known and key not in fresh:
                        fresh[key] = (body, extra)
                seq = self._db.execute("SELECT coalesce(max(seq), 0) FROM banners").fetchone()[0]  # fast: rowid
                added = []
                for key, (body, extra) in fresh.items():
                    seq += 1
                    added.append((seq, key, body, extra))
                self._db.executemany("INSERT INTO banners (seq, key, body) VALUES (?, ?, ?)",
                                     ((s, k, b) for s, k, b, _ in added))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return [(s, e) for s, _, _, e in added]

    def checkpoint(self) -> None:
        """Move the write-ahead log into the database file, synced (end of a bulk load)."""
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def fetch(self, seqs: list[int]) -> list[dict]:
        """The banners with these seqs, in the same order (missing ones are skipped)."""
        if not seqs:
            return []
        with self._lock:
            rows = dict(self._db.execute(
                f"SELECT seq, body FROM banners WHERE seq IN ({','.join('?' * len(seqs))})", seqs))
        return [unpack(rows[s]) for s in seqs if s in rows]

    def since(self, after_seq: int, batch: int = 5000) -> Iterator[list[tuple[int, dict]]]:
        """Every banner with seq > ``after_seq``, in batches, for (re)indexing."""
        last = after_seq
        while True:
            with self._lock:
                rows = self._db.execute("SELECT seq, body FROM banners WHERE seq > ? ORDER BY seq LIMIT ?",
                                        (last, batch)).fetchall()
            if not rows:
                return
            yield [(s, unpack(b)) for s, b in rows]
            last = rows[-1][0]

