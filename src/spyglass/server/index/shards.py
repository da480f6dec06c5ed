"""The search index in shards, so that any number of processes write one data dir at once.

tantivy allows one writer per index, and a writer is where an import's time went: with one index,
a second writer (an import beside a backend that collects) was turned away, and an import's
workers all waited on the one process that held it. So ``index/`` holds shards ``index/0``,
``index/1``, ... each a tantivy index with its own writer: a writer (the backend's collector, each
worker of an import) takes the first shard no other holds, making one if every shard is held, up
to :data:`MAX_SHARDS` (then it waits its turn). Every reader searches every shard and merges
(``index/merge.py``). The record store says which shard indexes each banner, so whoever takes a
shard can catch it up (``store.py``).

A shard's writer is tantivy's: its lock file goes with the process that held it, so a killed
import leaves no shard held.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from pathlib import Path

import orjson
import tantivy

from spyglass.server.index.schema import open_index

# A shard for each writer that may run at once: a backend's collector and a few imports, each with
# a worker per core. More would only be searched for nothing: a writer past them waits its turn.
MAX_SHARDS = max(8, 2 * (os.cpu_count() or 2))
RELOAD_EVERY = 1.0  # seconds: how often a reader picks up other writers' commits (and new shards)
WAIT_STEP = 0.1  # seconds between tries while every shard is held
CREATING = ".creating.lock"


class ShardsBusy(RuntimeError):
    """Every shard's writer was held for as long as the caller would wait."""


def meta_docs(path: Path) -> int:
    """The documents one tantivy index holds, by its meta.json (0: none, or unreadable)."""
    try:
        return sum(int(segment["max_doc"]) for segment in orjson.loads((path / "meta.json").read_bytes())["segments"])
    except (OSError, ValueError, TypeError, KeyError):
        return 0


def documents(root: Path) -> int:
    """What the index in ``root`` holds, by its meta.json files (nothing opened): every shard's,
    and an earlier layout's one index in ``root`` itself."""
    try:
        shards = [p for p in Path(root).iterdir() if p.name.isdigit()]
    except OSError:
        return 0
    return meta_docs(Path(root)) + sum(map(meta_docs, shards))


class Shards:
    """The shards under ``root``: opened as they appear, searched together, written one a writer."""

    def __init__(self, root: Path, schema: tantivy.Schema) -> None:
        self.root, self.schema = Path(root), schema
        self.root.mkdir(exist_ok=True)
        self._open: dict[int, tantivy.Index] = {}
        self._opening = threading.Lock()  # the writing thread opens shards while requests read them
        self._listed = 0.0

    def numbers(self) -> list[int]:
        """The shards made so far (each a folder with a tantivy index), in order."""
        return sorted(int(p.name) for p in self.root.iterdir() if p.name.isdigit() and (p / "meta.json").exists())

    def index(self, number: int) -> tantivy.Index:
        """Shard ``number``, made if it does not exist yet."""
        index = self._open.get(number)
        if index is None:
            with self._opening:
                if (index := self._open.get(number)) is None:
                    path = self.root / str(number)
                    with self._creating():  # two processes never both create one shard's first meta.json
                        path.mkdir(exist_ok=True)
                        index = open_index(self.schema, path)
                    self._open = {**self._open, number: index}  # a new dict: readers iterate the old one
        return index

    def check(self) -> None:
        """Open every segment of every shard: a damaged file fails here (ValueError), not in a search."""
        for number in self.numbers():
            self.index(number).searcher()

    def searchers(self) -> list[tantivy.Searcher]:
        """A searcher of every shard; other processes' commits and new shards are picked up at
        most once every RELOAD_EVERY."""
        now = time.monotonic()
        if now - self._listed > RELOAD_EVERY:
            for number in self.numbers():
                self.index(number).reload()
            self._listed = now
        return [index.searcher() for _, index in sorted(self._open.items())]  # (_open is replaced, never changed)

    def stale(self) -> None:
        """This process committed: read afresh at the next search."""
        self._listed = 0.0

    def take(self, number: int | None = None, heap: int = 0, threads: int = 1, wait: float | None = None):
        """``(number, writer)``: the writer of shard ``number``, or of the first shard no process
        holds (made if need be). Waits while every shard is held (or shard ``number`` is), trying
        every WAIT_STEP; :class:`ShardsBusy` after ``wait`` seconds (None: as long as it takes)."""
        deadline = None if wait is None else time.monotonic() + wait
        while True:
            for n in [number] if number is not None else range(MAX_SHARDS):
                try:
                    return n, self.index(n).writer(heap_size=heap, num_threads=threads)
                except ValueError:  # held by another writer
                    continue
            if deadline is not None and time.monotonic() >= deadline:
                held = f"shard {number}" if number is not None else f"all {MAX_SHARDS} shards"
                raise ShardsBusy(f"the index in {self.root} is being written: {held} held by other writers")
            time.sleep(WAIT_STEP)

    @contextlib.contextmanager
    def _creating(self):
        with open(self.root / CREATING, "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield
