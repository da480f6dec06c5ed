"""The saved-query directory on PostgreSQL: the
:class:`~spyglass.server.state.directory.DirectoryState` that several backends share.

A word matches at a word's start in any case, as on SQLite: the marked word in the ``words``
column (state/directory.py), a plain substring search with no regular expression."""

from __future__ import annotations

from typing import Any

from spyglass.server.postgres.connect import Pool, holds_nul, row_of
from spyglass.server.postgres.schema import init_schema
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

COLUMNS = "id, title, description, query, timestamp, votes, owner"


class PostgresDirectory:
    def __init__(self, url: str) -> None:
        init_schema(url)
        self._pool = Pool(url)

    def close(self) -> None:
        self._pool.close()

    def _load(self, where: str, args: list, order: str = "votes DESC, id", page: int = 1) -> tuple[list[Saved], int]:
        with self._pool.transaction() as db:
            total = row_of(db.execute(f"SELECT count(*) AS n FROM queries q WHERE {where}", args))["n"]
            rows = db.execute(
                f"SELECT {COLUMNS} FROM queries q WHERE {where} ORDER BY {order} LIMIT %s OFFSET %s",
                [*args, PAGE_SIZE, (page - 1) * PAGE_SIZE],
            ).fetchall()
            tags: dict[int, list[str]] = {}
            for row in db.execute(
                "SELECT query_id, tag FROM query_tags WHERE query_id = ANY(%s) ORDER BY seq", ([r["id"] for r in rows],)
            ):
                tags.setdefault(row["query_id"], []).append(row["tag"])
        return [Saved(**r, tags=tags.get(r["id"], [])) for r in rows], total

    def get(self, query_id: int) -> Saved | None:
        found, _ = self._load("id = %s", [query_id])
        return found[0] if found else None

    def listing(self, page: int, sort: str, order: str) -> tuple[list[Saved], int]:
        direction = "ASC" if order == "asc" else "DESC"
        return self._load("TRUE", [], f"{SORTS[sort]} {direction}, id {direction}", page)

    def search(self, words: list[str], tags: list[str], page: int) -> tuple[list[Saved], int]:
        check_search(words, tags)
        if holds_nul(*words, *tags):
            return [], 0
        where: list[str] = ["TRUE"]
        args: list[Any] = []
        for word in words:
            where.append("strpos(words, %s) > 0")
            args.append(marked(word))
        for tag in tags:
            where.append("EXISTS (SELECT 1 FROM query_tags t WHERE t.query_id = q.id AND t.tag = %s)")
            args.append(tag.lower())
        return self._load(" AND ".join(where), args, "votes DESC, timestamp DESC, id", page)

    def tags(self, size: int) -> tuple[list[tuple[str, int]], int]:
        with self._pool.transaction() as db:
            rows = db.execute(
                "SELECT tag, count(*) AS n FROM query_tags GROUP BY tag ORDER BY n DESC, tag LIMIT %s", (size,)
            ).fetchall()
            total = row_of(db.execute("SELECT count(DISTINCT tag) AS n FROM query_tags"))["n"]
        return [(r["tag"], r["n"]) for r in rows], total

    def save(
        self, owner: int, title: str, query: str, description: str, tags: list[str], quota: Quota | None = None
    ) -> Saved:
        with self._pool.transaction() as db:
            if quota is not None:  # the owner's lock to the end of the transaction: its saves one at a time
                db.execute("SELECT pg_advisory_xact_lock(hashtextextended('saved queries ' || %s, 0))", (owner,))
                kept = row_of(db.execute("SELECT count(*) AS n FROM queries WHERE owner = %s", (owner,)))["n"]
                recent = db.execute(
                    "SELECT timestamp FROM queries WHERE owner = %s AND timestamp > %s ORDER BY timestamp",
                    (owner, hour_ago()),
                ).fetchall()
                check_quota(quota, kept, [r["timestamp"] for r in recent])
            row = row_of(
                db.execute(
                    "INSERT INTO queries (title, description, query, timestamp, owner, words)"
                    " VALUES (%s,%s,%s,%s,%s,%s) RETURNING id",
                    (title, description, query, saved_now(), owner, search_text(title, description, query, tags)),
                )
            )
            query_id = row["id"]
            for tag in tags:
                db.execute("INSERT INTO query_tags (query_id, tag) VALUES (%s,%s)", (query_id, tag))
        saved = self.get(query_id)
        assert saved is not None
        return saved

    def vote(self, query_id: int, account: int, value: int) -> Saved | None:
        with self._pool.transaction() as db:
            if db.execute("SELECT 1 FROM queries WHERE id = %s FOR UPDATE", (query_id,)).fetchone() is None:
                return None
            before = db.execute(
                "SELECT value FROM query_votes WHERE query_id = %s AND account = %s", (query_id, account)
            ).fetchone()
            db.execute(
                "INSERT INTO query_votes VALUES (%s,%s,%s) ON CONFLICT (query_id, account) DO UPDATE SET value = %s",
                (query_id, account, value, value),
            )
            change = value - (before["value"] if before else 0)
            db.execute("UPDATE queries SET votes = votes + %s WHERE id = %s", (change, query_id))
        return self.get(query_id)

    def add_tags(self, query_id: int, account: int, tags: list[str]) -> Saved | None:
        saved = self.get(query_id)
        if saved is None:
            return None
        if saved.owner != account:
            raise NotYours
        check_tags(saved.tags + [t for t in tags if t not in saved.tags])  # the total stays within MAX_TAGS
        every = saved.tags + [t for t in tags if t not in saved.tags]
        with self._pool.transaction() as db:
            for tag in tags:
                db.execute(
                    "INSERT INTO query_tags (query_id, tag) VALUES (%s,%s) ON CONFLICT DO NOTHING", (query_id, tag)
                )
            words = search_text(saved.title, saved.description, saved.query, every)
            db.execute("UPDATE queries SET words = %s WHERE id = %s", (words, query_id))
        return self.get(query_id)

    def delete(self, query_id: int, account: int) -> bool:
        saved = self.get(query_id)
        if saved is None:
            return False
        if saved.owner != account:
            raise NotYours
        self._pool.run("DELETE FROM queries WHERE id = %s", (query_id,))
        return True
