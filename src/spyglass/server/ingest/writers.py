"""An import's workers that parse and write: each opens the store itself and writes what it parsed.

With one writer, an import's workers parsed and handed every banner back to the one process that
held the store's writer, which stored and indexed them all: that process was the ceiling (no faster
on 16 cores than on 2), and an import beside a backend that held the writer was turned away. A
store that can be opened in another process (``opener()``: the embedded one, whose index is in
shards, one a writer; ClickHouse, which takes any number of writers) is written by every worker at
once: each takes its own writer, and this process only reads the file and hands out its blocks.

A worker stores what it parsed BATCH banners at a time (or after HOLD seconds, so that search
sees an import's banners within a second or two), and then says, for each block, what it read and
how many banners were new. It never outlives the import (killed with it: importer.worker_start),
and what it stored is searchable after a kill (the store catches its shard up).
"""

from __future__ import annotations

import ctypes
import gc
import os
import pickle
import queue
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import Any, NoReturn, Protocol

from spyglass.server.banners.store import BannerStore, LoadsInBulk, Settles
from spyglass.server.ingest.sources import name_of
from spyglass.server.memory import give_back_soon, limit_arenas

SETTLE_WAIT = 5.0  # seconds an import waits for a shard's writer to apply the demotions it made there
BATCH = 20_000  # banners written at a time (one transaction of the records, a few per index commit)
HOLD = 0.25  # seconds a worker holds banners it parsed before it writes them, however few


def worker_start(parent: int) -> None:
    """Worker initializer: a worker must not outlive the import (e.g. killed with SIGKILL). It
    makes no reference cycles (parsed banners are freed as each is prepared): no cycle collector,
    which would otherwise run every few banners."""
    gc.disable()
    limit_arenas()  # (as the importing process: tantivy's threads spread a heap over many arenas)
    if sys.platform.startswith("linux"):
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The import holds tens of thousands of prepared banners at a time (no reference cycles): the
    cycle collector would walk them over and over. What cycles an error makes are collected after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class Written:
    """What a worker did with one job (a block of lines, or a scanner's pieces): the chunk it
    parsed (its banners left out) and how many of those banners were new."""

    job: int
    chunk: Any  # importer.Chunk, without its prepared banners
    added: int
    duplicates: int


@dataclass
class Failed:
    """A worker stopped: the store failed (a lost server, a full disk). The import stops too."""

    error: BaseException


def _work(opener: Callable[[], BannerStore], jobs, results, parent: int) -> None:
    """A worker's life: at its first job open the store and take a writer (a worker that gets none
    takes no index shard, which would stay empty), parse and write jobs until told to stop."""
    worker_start(parent)
    try:
        first = jobs.get()
        if first is None:
            results.put(None)
            return
        store = opener()
        # the embedded one's page cache
        bulk_load = store.bulk_load() if isinstance(store, LoadsInBulk) else nullcontext()
        with bulk_load, store.writing() as writer:
            try:
                _jobs(store, writer, jobs, results, first)
            except BaseException as exc:
                _fail(results, exc)  # before the writer's own ending, which a full disk may leave waiting
        store.close()
    except BaseException as exc:
        _fail(results, exc)
    results.put(None)
    # What the worker made is freed at exit with the process: the interpreter's last collection
    # would first walk every object left (a second of a worker's life, at 200,000 banners).
    gc.freeze()


def _jobs(store: BannerStore, writer, jobs, results, first) -> None:
    """Parse what comes in (``first``, then the queue's), and write it BATCH banners at a time
    (or after HOLD seconds)."""
    held: list[tuple[int, Any, list]] = []  # (job, chunk, its prepared banners)
    since = 0.0
    stopping = False
    given = [first]
    while not stopping:
        try:
            item = given.pop() if given else jobs.get(timeout=HOLD)
        except queue.Empty:
            item = ...
        if item is None:
            stopping = True
        elif item is not ...:
            number, work, payload = item
            chunk = work(type(store).prepare, payload)
            prepared, chunk.prepared = chunk.prepared, []
            held.append((number, chunk, prepared))
            since = since or time.monotonic()
        count = sum(len(p) for _, _, p in held)
        if held and (stopping or count >= BATCH or time.monotonic() - since >= HOLD):
            _write(writer, held, results)
            held, since = [], 0.0
        elif item is ...:  # waiting for the file: what it wrote is searchable meanwhile
            writer.commit_due()


def _fail(results, exc: BaseException) -> NoReturn:
    """Say why this worker stops, and stop at once: the import stops too, and what this worker
    stored is caught up when its shard is next taken."""
    try:
        pickle.dumps(exc)
        said = Failed(exc)
    except Exception:  # an exception that does not pickle: its words
        said = Failed(RuntimeError(f"{type(exc).__name__}: {exc}"))
    results.put(said)
    results.close()
    results.join_thread()  # (sent before this process ends)
    os._exit(1)


def _write(writer, held: list[tuple[int, Any, list]], results) -> None:
    added = set(writer.add([p for _, _, prepared in held for p in prepared]))
    give_back_soon()  # what tantivy's merges freed, which glibc would keep: a worker's RSS halves
    for number, chunk, prepared in held:
        new = 0
        for p in prepared:
            if p.key in added:  # a banner twice in one batch is new once
                new += 1
                added.discard(p.key)
        results.put(Written(number, chunk, new, len(prepared) - new))


def import_by_writers(
    index: BannerStore,
    opener: Callable[[], BannerStore],
    paths: list[Path],
    sizes: dict[Path, int],
    storing: Storing,
    jobs_of: Callable[[Path, list[int]], tuple[Any, Iterator[tuple[Callable, object]]]],
    workers: int,
    ahead: int,
) -> None:
    """The files' jobs (``jobs_of(path, position)``: a file's format and its jobs, raising
    ImportFileError where it cannot be read on) parsed and written by ``workers`` processes; what
    each job did given to ``storing`` in file order, between each file's start and end."""
    in_order = _InOrder(storing)
    pool = Writers(opener, workers, ahead, os.getpid())
    try:
        done_before, number = 0, 0
        for path in paths:
            position = [0]
            fmt, jobs = jobs_of(path, position)
            in_order.then(partial(storing.start, name_of(path), fmt))
            failed: Exception | None = None
            try:
                for work, payload in jobs:
                    number += 1
                    in_order.expect(number, position[0] + done_before)
                    pool.submit(number, work, payload, in_order.taken)
            except Exception as exc:
                if not storing.file_error(exc):
                    raise
                failed = exc
            in_order.then(partial(storing.end, failed, done_before + sizes[path]))
            done_before += sizes[path]
        pool.finish(in_order.taken)
    except BaseException:
        pool.stop()
        raise
    if isinstance(index, Settles):  # demotions the workers made in shards none of them held
        index.settle(wait=SETTLE_WAIT)


class _InOrder:
    """What the writing workers did, job by job, in the order of the jobs (they finish in any):
    each file's start and end are steps between its jobs."""

    def __init__(self, storing: Storing) -> None:
        self.storing = storing
        self.steps: deque[tuple[int, int] | Callable[[], object]] = deque()  # (job, position) or a step
        self.done: dict[int, Written] = {}

    def expect(self, job: int, position: int) -> None:
        self.steps.append((job, position))

    def then(self, step: Callable[[], object]) -> None:
        self.steps.append(step)
        self._run()

    def taken(self, written: Written) -> None:
        self.done[written.job] = written
        self._run()

    def _run(self) -> None:
        while self.steps:
            step = self.steps[0]
            if isinstance(step, tuple):
                job, position = step
                if job not in self.done:
                    return
                self.storing.written(self.done.pop(job), position)
            else:
                step()
            self.steps.popleft()


class Storing(Protocol):
    """What an import does with each file and with what the workers did (importer._Storing)."""

    def start(self, name: str, fmt: Any = None) -> None: ...

    def written(self, written: Written, done: int) -> None: ...

    def end(self, failed: Any, done: int) -> None: ...

    def file_error(self, exc: Exception) -> bool: ...


class Writers:
    """``count`` worker processes writing ``opener()``'s store; jobs in, :class:`Written` out (in
    any order), at most ``ahead`` jobs waiting."""

    def __init__(self, opener: Callable[[], BannerStore], count: int, ahead: int, parent: int) -> None:
        context = get_context("spawn")
        self.jobs = context.Queue(maxsize=ahead)
        self.results = context.Queue()
        self.running = count
        self.processes = [
            context.Process(target=_work, args=(opener, self.jobs, self.results, parent), daemon=True)
            for _ in range(count)
        ]
        for process in self.processes:
            process.start()

    def submit(self, number: int, work: Callable, payload: object, taken: Callable[[Written], None]) -> None:
        """Hand job ``number`` to a worker, giving what the workers finished meanwhile to ``taken``."""
        while True:
            self.drain(taken, block=False)
            self._check()
            try:
                self.jobs.put((number, work, payload), timeout=0.2)
                return
            except queue.Full:
                continue

    def drain(self, taken: Callable[[Written], None], block: bool) -> None:
        """Give what the workers finished to ``taken``; ``block``: until every worker has stopped."""
        while self.running:
            try:
                result = self.results.get(timeout=0.2) if block else self.results.get_nowait()
            except queue.Empty:
                if not block:
                    return
                self._check()
                continue
            if result is None:
                self.running -= 1
            elif isinstance(result, Failed):
                raise result.error
            else:
                taken(result)

    def _check(self) -> None:
        """A worker that stopped: raise what it said (its Failed), or that it died."""
        for process in self.processes:
            if process.exitcode not in (None, 0):
                while True:
                    try:
                        said = self.results.get(timeout=1)
                    except queue.Empty:
                        raise RuntimeError(f"an import worker died (exit status {process.exitcode})") from None
                    if isinstance(said, Failed):
                        raise said.error

    def finish(self, taken: Callable[[Written], None]) -> None:
        """Let every worker write what it holds and stop; everything they did to ``taken``."""
        for _ in self.processes:
            while True:
                try:
                    self.jobs.put(None, timeout=0.2)
                    break
                except queue.Full:
                    self.drain(taken, block=False)
                    self._check()
        self.drain(taken, block=True)
        for process in self.processes:
            process.join()

    def stop(self) -> None:
        """End every worker at once (the import failed): what they stored is kept, and indexed."""
        for waiting in (self.jobs, self.results):  # nobody reads them now: never wait at exit to send
            waiting.cancel_join_thread()
            waiting.close()
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        for process in self.processes:
            process.join()
