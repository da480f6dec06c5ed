"""One answer from every shard's (``shards.py``): hits newest first, summed counts, merged facets.

With one shard (a data dir written by one writer at a time, as most are) every function hands the
shard's own answer back untouched, so its order is tantivy's to the letter.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Any, cast

import tantivy

from spyglass.query import Facet
from spyglass.server.index.aside import each
from spyglass.server.index.schema import aggregate, facet_terms


def hit_count(result: tantivy.SearchResult) -> int:
    return result.count  # type: ignore[attr-defined]  # set when searched with count=True; the stub omits it


def rowids(searcher: tantivy.Searcher, addresses: list) -> list[int]:
    """The record seqs of hits (every document has an integer ``i_rowid``)."""
    return cast(list[int], searcher.fast_field_values("i_rowid", addresses))


def newest(
    searchers: list[tantivy.Searcher],
    query: tantivy.Query,
    limit: int,
    offset: int = 0,
    count: bool = False,
    alone: bool = False,
) -> tuple[int, list[int]]:
    """The seqs of the matches ``offset`` to ``offset + limit``, newest first, and (``count``) how
    many match in all. Each shard gives its first ``offset + limit`` (at once when the search is
    ``alone``: aside.py); the merge keeps the page."""
    if len(searchers) == 1:
        searcher = searchers[0]
        result = searcher.search(query, limit=limit, count=count, order_by_field="timestamp", offset=offset)
        return hit_count(result) if count else 0, rowids(searcher, [a for _, a in result.hits])

    def first(searcher: tantivy.Searcher) -> tuple[int, list[tuple[int, int]]]:
        result = searcher.search(query, limit=offset + limit, count=count, order_by_field="timestamp")
        seqs = rowids(searcher, [a for _, a in result.hits])
        return hit_count(result) if count else 0, [
            (-stamp, seq) for (stamp, _), seq in zip(result.hits, seqs, strict=True)
        ]

    found = each(alone, first, searchers)
    total = sum(n for n, _ in found)
    merged = heapq.merge(*(run for _, run in found))  # each run is newest first already
    return total, [seq for _, seq in list(merged)[offset : offset + limit]]


def services(searchers: list[tantivy.Searcher], query: tantivy.Query) -> list[int]:
    """The keys of the services of every banner matching ``query`` (i_service), over every shard."""
    found: set[int] = set()
    for searcher in searchers:
        hits = searcher.search(query, limit=max(1, hit_count(searcher.search(query, limit=1, count=True))))
        found.update(cast(list[int], searcher.fast_field_values("i_service", [a for _, a in hits.hits])))
    return sorted(found)


def counted(searchers: list[tantivy.Searcher], query: tantivy.Query) -> int:
    return sum(hit_count(s.search(query, limit=1, count=True)) for s in searchers)


def facets(
    searchers: list[tantivy.Searcher], query: tantivy.Query, wanted: list[Facet], alone: bool = False
) -> dict[str, dict]:
    """Each facet's largest values over every shard's matches, as ``{name: [bucket, ...]}`` in
    tantivy's form (``key``, ``doc_count``, ``key_as_string`` where it says one); the shards at
    once when the search is ``alone`` (aside.py)."""
    numbered = list(enumerate(wanted))
    spec = facet_terms(numbered, shards=len(searchers))
    results = each(alone, lambda s: aggregate(s, query, spec), searchers)
    return {f"f{i}": {"buckets": merged_buckets([r.get(f"f{i}", {}) for r in results], f.size)} for i, f in numbered}


def merged_buckets(parts: Iterable[dict], size: int) -> list[dict]:
    """Terms buckets of several shards as one list: counts of a key summed, largest first (ties in
    the key's order, as one index gives them: 22 before 80), the first ``size``."""
    parts = list(parts)
    if len(parts) == 1:
        buckets = parts[0].get("buckets", [])
        return buckets[:size]
    by_key: dict[Any, dict] = {}
    for part in parts:
        for bucket in part.get("buckets", []):
            key = bucket["key"]
            if key in by_key:
                by_key[key]["doc_count"] += bucket["doc_count"]
            else:
                by_key[key] = dict(bucket)
    ordered = sorted(by_key.values(), key=_largest_first)
    return ordered[:size]


def _largest_first(bucket: dict) -> tuple:
    key = bucket["key"]
    return (-bucket["doc_count"], isinstance(key, str), key)  # (one field's keys are of one kind)
