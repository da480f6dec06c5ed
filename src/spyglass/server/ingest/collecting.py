"""Collected banners written as an import writes them: prepared and stored in a process of its own.

A backend that collects (scan results, replays, the demo collector) prepared and wrote every banner
in its one process, under the interpreter lock its requests and streams need too: collection ran
well under an import's rate, and slowed every answer while it ran. :class:`WriterProcess` hands each
batch's bodies to a process that opens the store as an import's worker does (``opener()``), prepares
and writes them there, and says which banners were refused and which were new. The backend only
tells its listeners (the stream, the alerts) about the new ones, from the banners it already holds.

:func:`write_collected` is what both do with a batch: the backend itself where the store cannot be
opened by another process (an engine in this process) or none is started (tests, scripts).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from multiprocessing import get_context
from typing import Any, NamedTuple

from spyglass.exactjson import loads
from spyglass.server.banners.keys import PRIVATE, public_service_key
from spyglass.server.banners.shape import BadBanner, normalize
from spyglass.server.banners.store import BannerBatch, BannerStore, Commits, Prepared
from spyglass.server.ingest.writers import worker_start

log = logging.getLogger("spyglass.collect")

LET_GO_AFTER = 1.0  # seconds without a batch after which the writer process lets its writer go


class Outcome(NamedTuple):
    """What became of a batch's banners, by their place in it."""

    refused: list[tuple[int, str]]  # (place, why)
    new: list[tuple[int, bool]]  # (place, whether it is its service's first banner ever)


def write_collected(
    store: BannerStore,
    banners: Sequence[tuple[object, bytes | None]],
    latest: str,
    future: str,
    writer: BannerBatch | None = None,
) -> Outcome:
    """Prepare and store ``banners`` ((banner, its body or None)) in one writer's block, or with
    ``writer`` (committed before this returns if it can be: held for more batches). A banner dated after
    ``latest`` ("YYYY-MM-DDTHH:MM:SS") is refused as ``future`` says; a banner twice in the batch is
    new once."""
    refused: list[tuple[int, str]] = []
    prepared: list[tuple[int, Prepared]] = []
    for place, (banner, body) in enumerate(banners):
        try:
            p = store.prepare(banner, body)
        except BadBanner as exc:
            refused.append((place, str(exc)))
        except Exception as exc:  # one banner stands alone, whatever it holds
            refused.append((place, f"unreadable banner ({type(exc).__name__})"))
        else:
            if p.stamp[:19] > latest:  # both "YYYY-MM-DDTHH:MM:SS": ordered as text
                refused.append((place, f"timestamp {p.stamp} is {future}"))
            else:
                prepared.append((place, p))
    public = {place: key for place, _ in prepared if (key := _public_twin(banners[place][0])) is not None}
    known = store.known_services([p.service for _, p in prepared] + list(public.values()))
    if writer is None:
        with store.writing() as batch:
            added = set(batch.add([p for _, p in prepared]))
    else:
        added = set(writer.add([p for _, p in prepared]))
        if isinstance(writer, Commits):
            writer.commit()
    new: list[tuple[int, bool]] = []
    for place, p in prepared:
        if p.key in added:
            added.discard(p.key)
            new.append((place, p.service not in known and public.get(place) not in known))
            known.add(p.service)
    return Outcome(refused, new)


def _public_twin(banner: object) -> int | None:
    """A private scan result's public service (keys.public_service_key); None for any other."""
    if not isinstance(banner, dict) or not isinstance(tags := banner.get("tags"), list) or PRIVATE not in tags:
        return None  # (the usual case, told as keys.py tells one, without shaping the banner again)
    return public_service_key(banner, normalize(banner))


class WriterDied(RuntimeError):
    """The writer process ended without answering (killed): nothing it was given was acknowledged."""


class WriterProcess:
    """A process that writes ``opener()``'s store for this one: :meth:`write` a batch of bodies
    (one at a time: a lock keeps the order), :meth:`close` at the end. Started at the first batch,
    again after it died; killed with this process (writers.worker_start)."""

    def __init__(self, opener: Callable[[], BannerStore]) -> None:
        self.opener = opener
        self._lock = threading.Lock()
        self._process: Any = None
        self._pipe: Any = None

    def write(self, bodies: list[bytes], latest: str, future: str) -> Outcome:
        """:func:`write_collected` of ``bodies`` in the writer process; what it raised is raised
        here (StoreBusy, a full disk...). A writer that died is started again and given the batch
        once more (a banner it stored before it died is then not new: never stored twice)."""
        with self._lock:
            for attempt in (1, 2):
                try:
                    return self._ask((bodies, latest, future))
                except WriterDied:
                    self._end()
                    if attempt == 2:
                        raise
            raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            if self._pipe is not None:
                try:
                    self._pipe.send(None)
                except OSError:
                    pass
            self._end(wait=10.0)

    def _ask(self, request: tuple) -> Outcome:
        if self._process is None:
            context = get_context("spawn")
            self._pipe, theirs = context.Pipe()
            self._process = context.Process(
                target=_serve, args=(self.opener, theirs, os.getpid()), name="spyglass-collect-writer", daemon=True
            )
            self._process.start()
            theirs.close()
        try:
            self._pipe.send(request)
            answer = self._pipe.recv()
        except (EOFError, OSError) as exc:
            raise WriterDied(f"the collected banners' writer process stopped ({exc or type(exc).__name__})") from None
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def _end(self, wait: float = 0.0) -> None:
        process, self._process = self._process, None
        pipe, self._pipe = self._pipe, None
        if process is not None:
            process.join(wait)
            if process.is_alive():
                process.kill()
                process.join()
        if pipe is not None:
            pipe.close()


def _serve(opener: Callable[[], BannerStore], pipe, parent: int) -> None:
    """The writer process: the store opened once, each batch written as it comes, until None."""
    worker_start(parent)
    store = opener()
    try:
        request = pipe.recv()
        while request is not None:
            request = _write_batches(store, pipe, request)
    finally:
        store.close()


def _write_batches(store: BannerStore, pipe, request: tuple) -> tuple | None:
    """``request``'s batch written and answered, and those that follow within LET_GO_AFTER
    seconds with the same writer, each committed before its answer, where the store's writer
    commits as it goes (the embedded one): taking a shard's writer and letting it go again for
    every batch (its threads, its merges waited for, the other shards looked at) took a tenth of a
    collected batch's time or more. Let go after a quiet spell (an idle backend holds no writer's
    threads and memory; an import's end waits for this one's commits, not for it to let go:
    BannerIndex._settle). Returns the next request."""
    owed, stopping = True, False  # (owed: the request has no answer yet)
    reply: Any = None
    try:
        with store.writing() as writer:
            while True:
                reply = _write(store, request, writer)
                if not isinstance(writer, Commits):
                    break  # stored when the block ends: answered then
                _send(pipe, reply)
                owed = False
                if not pipe.poll(LET_GO_AFTER):
                    break
                if (request := pipe.recv()) is None:
                    stopping = True
                    break
                owed = True
    except Exception as exc:  # the backend's to raise (and retry: StoreBusy)
        if owed:
            reply = exc
        else:  # letting the writer go, its batches answered: the records hold them, the next indexes them
            log.warning("the collected banners' writer ended with an error: %s", exc)
    if owed:
        _send(pipe, reply)
    return None if stopping else pipe.recv()


def _write(store: BannerStore, request: tuple, writer: BannerBatch) -> Outcome:
    bodies, latest, future = request
    return write_collected(store, [(_read(b), b) for b in bodies], latest, future, writer)


def _send(pipe, reply: Any) -> None:
    try:
        pipe.send(reply)
    except Exception as exc:  # an exception that does not pickle: its words
        pipe.send(RuntimeError(f"{type(exc).__name__}: {exc}"))


def _read(body: bytes) -> object:
    """A body as the banner it holds; one this process cannot read is left to prepare to refuse."""
    try:
        return loads(body)
    except ValueError:
        return None
