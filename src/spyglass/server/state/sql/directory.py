"""The saved-query directory, written once over :class:`~spyglass.server.state.sql.db.Db`:
SQLite's (server/state/sqlite/directory.py) and PostgreSQL's (server/state/postgres/directory.py)
:class:`~spyglass.server.state.directory.DirectoryState`, and the migration steps both take.

A word matches at a word's start in any case: the marked word in the ``words`` column
(state/directory.py), a plain substring search with no regular expression."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spyglass.server.state.directory import (
    PAGE_SIZE,
    SORTS,
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
from spyglass.server.state.directoryseed import SEED
from spyglass.server.state.sql.db import Db, Tx

COLUMNS = "id, title, description, query, timestamp, votes, owner"
ADD_TAG = "INSERT INTO query_tags (query_id, tag) VALUES (?,?)"


def seed(db: Tx) -> None:
    """A migration step: the directory's starting set."""
    for title, query, description, tags, votes, stamp in SEED:
        (query_id,) = db.execute(
            "INSERT INTO queries (title, description, query, timestamp, votes) VALUES (?,?,?,?,?) RETURNING id",
            (title, description, query, stamp, votes),
        ).fetchone()
        for tag in tags.split(","):
            db.execute(ADD_TAG, (query_id, tag))


def add_words(tag_order: str) -> Callable[[Tx], None]:
    """A migration step: what a search looks in (state/directory.py's search_text), kept beside
    each query, so that no regular expression runs at search time. ``tag_order``: the column that
    keeps tags in the order they were given."""

    def step(db: Tx) -> None:
        db.execute("ALTER TABLE queries ADD COLUMN words TEXT NOT NULL DEFAULT ''")
        for qid, title, description, query in db.execute(
            "SELECT id, title, description, query FROM queries"
        ).fetchall():
            given = db.execute(f"SELECT tag FROM query_tags WHERE query_id = ? ORDER BY {tag_order}", (qid,))
            tags = [tag for (tag,) in given.fetchall()]
            db.execute("UPDATE queries SET words = ? WHERE id = ?", (search_text(title, description, query, tags), qid))

    return step


class SqlDirectory:
    """Thread-safe; every write is one transaction."""

    _db: Db
    TAG_ORDER = "rowid"  # the column that keeps a query's tags in the order they were given
    HOLDS = "instr(words, ?) > 0"  # the words hold a marked word

    def close(self) -> None:
        self._db.close()

    def _load(self, where: str, args: list, order: str = "votes DESC, id", page: int = 1) -> tuple[list[Saved], int]:
        with self._db.reading() as db:
            total = db.execute(f"SELECT count(*) AS n FROM queries q WHERE {where}", args).fetchone()["n"]
            rows = db.execute(
                f"SELECT {COLUMNS} FROM queries q WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
                [*args, PAGE_SIZE, (page - 1) * PAGE_SIZE],
            ).fetchall()
            tags: dict[int, list[str]] = {}
            if rows:
                among, values = self._db.any_of("query_id", [r["id"] for r in rows])
                for row in db.execute(
                    f"SELECT query_id, tag FROM query_tags WHERE {among} ORDER BY {self.TAG_ORDER}", values
                ).fetchall():
                    tags.setdefault(row["query_id"], []).append(row["tag"])
        return [Saved(**dict(r), tags=tags.get(r["id"], [])) for r in rows], total

    def get(self, query_id: int) -> Saved | None:
        found, _ = self._load("id = ?", [query_id])
        return found[0] if found else None

    def listing(self, page: int, sort: str, order: str) -> tuple[list[Saved], int]:
        direction = "ASC" if order == "asc" else "DESC"
        return self._load("TRUE", [], f"{SORTS[sort]} {direction}, id {direction}", page)

    def search(self, words: list[str], tags: list[str], page: int) -> tuple[list[Saved], int]:
        check_search(words, tags)
        if self._db.unstorable(*words, *tags):
            return [], 0
        where: list[str] = ["TRUE"]
        args: list[Any] = []
        for word in words:
            where.append(self.HOLDS)
            args.append(marked(word))
        for tag in tags:
            where.append("EXISTS (SELECT 1 FROM query_tags t WHERE t.query_id = q.id AND t.tag = ?)")
            args.append(tag.lower())
        return self._load(" AND ".join(where), args, "votes DESC, timestamp DESC, id", page)

    def tags(self, size: int) -> tuple[list[tuple[str, int]], int]:
        """The ``size`` most used tags with their counts, and how many tags there are."""
        with self._db.reading() as db:
            rows = db.execute(
                "SELECT tag, count(*) AS n FROM query_tags GROUP BY tag ORDER BY n DESC, tag LIMIT ?", (size,)
            ).fetchall()
            total = db.execute("SELECT count(DISTINCT tag) AS n FROM query_tags").fetchone()["n"]
        return [(r["tag"], r["n"]) for r in rows], total

    def save(
        self, owner: int, title: str, query: str, description: str, tags: list[str], quota: Quota | None = None
    ) -> Saved:
        stamp = saved_now()
        with self._db.transaction() as db:
            if quota is not None:  # counted and saved with no save of the owner's between
                self._db.one_at_a_time(db, "saved queries", owner)
                kept = db.execute("SELECT count(*) AS n FROM queries WHERE owner = ?", (owner,)).fetchone()["n"]
                recent = db.execute(
                    "SELECT timestamp FROM queries WHERE owner = ? AND timestamp > ? ORDER BY timestamp",
                    (owner, hour_ago()),
                ).fetchall()
                check_quota(quota, kept, [r["timestamp"] for r in recent])
            query_id = db.execute(
                "INSERT INTO queries (title, description, query, timestamp, owner, words) VALUES (?,?,?,?,?,?)"
                " RETURNING id",
                (title, description, query, stamp, owner, search_text(title, description, query, tags)),
            ).fetchone()["id"]
            for tag in tags:
                db.execute(ADD_TAG, (query_id, tag))
        saved = self.get(query_id)
        assert saved is not None
        return saved

    def vote(self, query_id: int, account: int, value: int) -> Saved | None:
        """The account's vote (+1 or -1; voting again replaces it); None if there is no such query."""
        with self._db.transaction() as db:
            if db.execute(f"SELECT 1 FROM queries WHERE id = ?{self._db.for_update}", (query_id,)).fetchone() is None:
                return None
            before = db.execute(
                "SELECT value FROM query_votes WHERE query_id = ? AND account = ?", (query_id, account)
            ).fetchone()
            db.execute(
                "INSERT INTO query_votes VALUES (?,?,?) ON CONFLICT (query_id, account) DO UPDATE SET value = ?",
                (query_id, account, value, value),
            )
            change = value - (before["value"] if before else 0)
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
            for tag in tags:
                db.execute(f"{ADD_TAG} ON CONFLICT DO NOTHING", (query_id, tag))
            given = db.execute(f"SELECT tag FROM query_tags WHERE query_id = ? ORDER BY {self.TAG_ORDER}", (query_id,))
            words = search_text(saved.title, saved.description, saved.query, [r["tag"] for r in given.fetchall()])
            db.execute("UPDATE queries SET words = ? WHERE id = ?", (words, query_id))
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
