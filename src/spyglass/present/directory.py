"""Saved queries of the directory as inert text: the CLI's lines and the dashboard's rows.
Titles, descriptions, queries and tags are user-written: cleaned here."""

from __future__ import annotations

from typing import Any

from spyglass.present.values import text_of


def query_cells(saved: Any) -> dict[str, str]:
    """A saved query's cells by name: id, votes, title, query, tags, date, description."""
    return {
        "id": str(saved.id) if saved.id is not None else "",
        "votes": f"{saved.votes:,}",
        "title": text_of(saved.title, max_chars=200),
        "query": text_of(saved.query, max_chars=1000),
        "tags": ", ".join(text_of(t, max_chars=40) for t in saved.tags),
        "date": text_of(saved.timestamp, max_chars=40)[:10],
        "description": text_of(saved.description, max_chars=1000),
    }


def query_lines(matches: list[Any]) -> list[str]:
    """Two lines a query: votes, id, title and tags; then the query itself, indented."""
    lines = []
    for saved in matches:
        cells = query_cells(saved)
        ident = f"#{cells['id']}  " if cells["id"] else ""
        tags = f"  [{cells['tags']}]" if cells["tags"] else ""
        lines.append(f"{cells['votes']:>5}  {ident}{cells['title']}{tags}")
        lines.append(f"       {cells['query']}")
    return lines


def tag_lines(tags: Any) -> list[str]:
    width = max((len(f"{t.count:,}") for t in tags.matches), default=1)
    return [f"{t.count:>{width},}  {text_of(t.value, max_chars=40)}" for t in tags.matches]
