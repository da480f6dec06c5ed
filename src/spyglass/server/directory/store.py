"""The saved queries of the directory on SQLite, in ``<data_dir>/directory.db``: the embedded
:class:`~spyglass.server.state.directory.DirectoryState`; the starting set is seeded by a migration
step."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from spyglass.server.directory.seed import SEED
from spyglass.server.sqlite import Database
from spyglass.server.state.directory import (  # noqa: F401 (MAX_TAGS, TAG: tests name them here)
    MAX_TAGS,
    PAGE_SIZE,
    SORTS,
    TAG,
    NotYours,
    Quota,
    Saved,
    check_quota,
    check_search,
    check_tags,
    hour_ago,
    marked,
    saved_now,
    search_text,
)

V1_QUERIES = """
CREATE TABLE queries (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    query TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    votes INTEGER NOT NULL DEFAULT 0,
    owner INTEGER  -- the account that saved it; NULL for the starting set
);
CREATE TABLE query_tags (
    query_id INTEGER NOT NULL REFERENCES queries(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (query_id, tag)
);
CREATE INDEX query_tags_by_tag ON query_tags(tag);
CREATE TABLE query_votes (
    query_id INTEGER NOT NULL REFERENCES queries(id) ON DELETE CASCADE,
    account INTEGER NOT NULL,
    value INTEGER NOT NULL CHECK (value IN (-1, 1)),
    PRIMARY KEY (query_id, account)
);
"""


def _seed(db: sqlite3.Connection) -> None:
    for title, query, description, tags, votes, stamp in SEED:
        cur = db.execute(
            "INSERT INTO queries (title, description, query, timestamp, votes) VALUES (?,?,?,?,?)",
            (title, description, query, stamp, votes),
        )
        db.executemany("INSERT INTO query_tags VALUES (?,?)", [(cur.lastrowid, t) for t in tags.split(",")])


def _fill_words(db: sqlite3.Connection, where: str = "1", args: tuple = ()) -> None:
    """``words`` (state/directory.py's search_text) of the queries ``where`` says, as they stand."""
    for qid, title, description, query in db.execute(
        f"SELECT id, title, description, query FROM queries WHERE {where}", args
    ).fetchall():
        tags = [t for (t,) in db.execute("SELECT tag FROM query_tags WHERE query_id = ? ORDER BY rowid", (qid,))]
        db.execute("UPDATE queries SET words = ? WHERE id = ?", (search_text(title, description, query, tags), qid))


def _v2_words(db: sqlite3.Connection) -> None:
    """What a search looks in, kept beside each query: no regular expression at search time."""
    db.execute("ALTER TABLE queries ADD COLUMN words TEXT NOT NULL DEFAULT ''")
    _fill_words(db)


MIGRATIONS = (V1_QUERIES, _seed, _v2_words)


class Directory:
    """Thread-safe; every write is one transaction."""

    def __init__(self, data_dir: Path) -> None:
        self._db = Database(Path(data_dir) / "directory.db", synchronous="NORMAL", migrations=MIGRATIONS, rows=False)
        self._db.run("PRAGMA foreign_keys=ON")

    def close(self) -> None:
        self._db.close()

    def _load(self, where: str, args: list, order: str = "votes DESC, id", page: int = 1) -> tuple[list[Saved], int]:
        with self._db.lock:
            db = self._db.conn
            total = db.execute(f"SELECT count(*) FROM queries q WHERE {where}", args).fetchone()[0]
            rows = db.execute(
                f"SELECT id, title, description, query, timestamp, votes, owner FROM queries q WHERE {where}"
                f" ORDER BY {order} LIMIT ? OFFSET ?",
                [*args, PAGE_SIZE, (page - 1) * PAGE_SIZE],
            ).fetchall()
            tags: dict[int, list[str]] = {}
            ids = [r[0] for r in rows]
            for qid, tag in db.execute(
                f"SELECT query_id, tag FROM query_tags WHERE query_id IN ({','.join('?' * len(ids))}) ORDER BY rowid",
                ids,
            ):
                tags.setdefault(qid, []).append(tag)
        return [
            Saved(
                id=r[0],
                title=r[1],
                description=r[2],
                query=r[3],
                timestamp=r[4],
                votes=r[5],
                tags=tags.get(r[0], []),
                owner=r[6],
            )
            for r in rows
        ], total

    def get(self, query_id: int) -> Saved | None:
        found, _ = self._load("id = ?", [query_id])
        return found[0] if found else None

    def listing(self, page: int, sort: str, order: str) -> tuple[list[Saved], int]:
        direction = "ASC" if order == "asc" else "DESC"
        return self._load("1", [], f"{SORTS[sort]} {direction}, id {direction}", page)

    def search(self, words: list[str], tags: list[str], page: int) -> tuple[list[Saved], int]:
        check_search(words, tags)
        where, args = ["1"], []
        for word in words:
            where.append("instr(words, ?) > 0")
            args.append(marked(word))
        for tag in tags:
            where.append("EXISTS (SELECT 1 FROM query_tags t WHERE t.query_id = q.id AND t.tag = ?)")
            args.append(tag.lower())
        return self._load(" AND ".join(where), args, "votes DESC, timestamp DESC, id", page)

    def tags(self, size: int) -> tuple[list[tuple[str, int]], int]:
        """The ``size`` most used tags with their counts, and how many tags there are."""
        with self._db.lock:
            rows = self._db.conn.execute(
                "SELECT tag, count(*) AS n FROM query_tags GROUP BY tag ORDER BY n DESC, tag LIMIT ?", (size,)
            ).fetchall()
            total = self._db.conn.execute("SELECT count(DISTINCT tag) FROM query_tags").fetchone()[0]
        return [(t, n) for t, n in rows], total

    def save(
        self, owner: int, title: str, query: str, description: str, tags: list[str], quota: Quota | None = None
    ) -> Saved:
        stamp = saved_now()
        with self._db.transaction() as db:  # BEGIN IMMEDIATE: counted and saved with no save between
            if quota is not None:
                kept = db.execute("SELECT count(*) FROM queries WHERE owner = ?", (owner,)).fetchone()[0]
                recent = db.execute(
                    "SELECT timestamp FROM queries WHERE owner = ? AND timestamp > ? ORDER BY timestamp",
                    (owner, hour_ago()),
                ).fetchall()
                check_quota(quota, kept, [r[0] for r in recent])
            cur = db.execute(
                "INSERT INTO queries (title, description, query, timestamp, owner, words) VALUES (?,?,?,?,?,?)",
                (title, description, query, stamp, owner, search_text(title, description, query, tags)),
            )
            query_id = cur.lastrowid
            db.executemany("INSERT INTO query_tags VALUES (?,?)", [(query_id, t) for t in tags])
        saved = self.get(int(query_id or 0))
        assert saved is not None
        return saved

    def vote(self, query_id: int, account: int, value: int) -> Saved | None:
        """The account's vote (+1 or -1; voting again replaces it); None if there is no such query."""
        with self._db.transaction() as db:
            if db.execute("SELECT 1 FROM queries WHERE id = ?", (query_id,)).fetchone() is None:
                return None
            before = db.execute(
                "SELECT value FROM query_votes WHERE query_id = ? AND account = ?", (query_id, account)
            ).fetchone()
            db.execute("INSERT OR REPLACE INTO query_votes VALUES (?,?,?)", (query_id, account, value))
            change = value - (before[0] if before else 0)
            db.execute("UPDATE queries SET votes = votes + ? WHERE id = ?", (change, query_id))
        return self.get(query_id)

    def add_tags(self, query_id: int, account: int, tags: list[str]) -> Saved | None:
        """Tag the account's own query; None if there is no such query, NotYours if not its own."""
        saved = self.get(query_id)
        if saved is None:
            return None
        if saved.owner != account:
            raise NotYours
        check_tags(saved.tags + [t for t in tags if t not in saved.tags])  # the total stays within MAX_TAGS
        with self._db.transaction() as db:
            db.executemany("INSERT OR IGNORE INTO query_tags VALUES (?,?)", [(query_id, t) for t in tags])
            _fill_words(db, "id = ?", (query_id,))
        return self.get(query_id)

    def delete(self, query_id: int, account: int) -> bool:
        """Delete the account's own query; False if there is none, NotYours if not its own."""
        saved = self.get(query_id)
        if saved is None:
            return False
        if saved.owner != account:
            raise NotYours
        self._db.run("DELETE FROM queries WHERE id = ?", (query_id,))
        return True
