"""The stream pane's buffer, without Textual: what it read, what it keeps, what a filter shows,
what a pause holds, and the counters of its status line.

The buffer keeps every banner it received, within its size; a filter is a view over it. Applying a
filter shows the kept lines that match, clearing it shows them all again, and lines that arrive
are kept whether or not they match. The pane draws the view (a :class:`~spyglass.tui.widgets.tail.Tail`)
and drives this class; its tests and ``bench/stream_pane.py`` drive it directly.

Threads: :meth:`StreamBuffer.prepare` and :meth:`StreamBuffer.matching` run in a worker thread and
touch no state; everything else runs on the UI loop, :meth:`StreamBuffer.pump` included.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from typing import Protocol

BUFFER = 5000  # lines kept by default
RATE_WINDOW = 20  # seconds of the rate sparkline
PUMP_EVERY = 0.1  # seconds between batches handed to the parsing thread

Describe = Callable[[bytes], tuple[str, str]]  # raw -> (one inert line, the address it is about)
Filter = Callable[[dict], bool]  # whether a banner (as JSON) shows: a query's matcher


class Recorder(Protocol):
    def write(self, line: bytes) -> None: ...


class TailEntry:
    """One line: its raw bytes, its number in the order received, and its text, made the first time
    it is shown (at the firehose's rate most lines scroll past unseen: only what is drawn is ever
    formatted)."""

    __slots__ = ("raw", "number", "_describe", "_text")

    def __init__(self, raw: bytes, describe: Describe) -> None:
        self.raw = raw  # e.g. a banner's JSON as received (for the detail, saving, opening the host)
        self.number = 0  # given when the buffer keeps it
        self._describe = describe
        self._text: tuple[str, str] | None = None

    def _described(self) -> tuple[str, str]:
        if self._text is None:
            self._text = self._describe(self.raw)
        return self._text

    @property
    def line(self) -> str:
        return self._described()[0]

    @property
    def address(self) -> str:
        return self._described()[1]


def banner_matches(raw: bytes, matches: Filter) -> bool:
    """Whether the line is a banner the filter shows (a line that is not a banner never is)."""
    from spyglass.client.streamparse import loads

    try:
        banner = loads(raw)
    except ValueError:
        return False
    return isinstance(banner, dict) and bool(matches(banner))


class StreamBuffer:
    def __init__(self, capacity: int = BUFFER) -> None:
        self.inbox: deque[bytes] = deque(maxlen=capacity)  # read, not yet prepared
        self.kept: deque[TailEntry] = deque(maxlen=capacity)  # everything prepared, oldest first
        self.pending: deque[TailEntry] = deque(maxlen=capacity)  # shown lines that arrived while paused
        self.matches: Filter | None = None  # None: every line shows
        self.paused = False
        self.frozen_at = 0  # while paused: the number of the first line that arrived after the pause
        self.numbered = 0  # lines ever kept: the next one's number
        self.received = 0  # lines read off the stream
        self.dropped = 0  # lines let go before they were kept or shown (the pane fell behind, or a long pause)
        self.discarded = 0  # as the server reported (its debug events)
        self.rates: deque[int] = deque([0] * RATE_WINDOW, maxlen=RATE_WINDOW)
        self.this_second = 0
        self.lock = asyncio.Lock()  # one batch, refilter or save at a time: each sees the others' result
        self.generation = 0  # counts clear(): a batch read before the last one was of another stream

    @property
    def capacity(self) -> int:
        return self.kept.maxlen or 0

    @property
    def oldest(self) -> int:
        """The number of the oldest kept line: a view holds nothing older."""
        return self.numbered - len(self.kept)

    def clear(self) -> None:
        """Another stream: start afresh (the filter and the pause stay)."""
        self.generation += 1
        self.inbox.clear()
        self.kept.clear()
        self.pending.clear()
        self.received = self.dropped = self.discarded = self.this_second = 0

    def resize(self, capacity: int) -> None:
        self.inbox = deque(self.inbox, maxlen=capacity)
        self.kept = deque(self.kept, maxlen=capacity)
        self._trim_pending()
        self.pending = deque(self.pending, maxlen=capacity)

    # -- reading (the UI loop, as lines arrive) --------------------------------------------------
    def read(self, raw: bytes) -> None:
        if len(self.inbox) == self.inbox.maxlen:
            self.dropped += 1
        self.inbox.append(raw)
        self.received += 1
        self.this_second += 1

    def take(self) -> list[bytes]:
        """The lines read since the last batch."""
        lines = list(self.inbox)
        self.inbox.clear()
        return lines

    def second(self) -> None:
        """A second passed: the rate sparkline moves on."""
        self.rates.append(self.this_second)
        self.this_second = 0

    # -- a batch (prepared in a thread, delivered on the UI loop) --------------------------------
    async def pump(
        self,
        describer: Callable[[], Describe],
        recorder: Callable[[], Recorder | None],
        show: Callable[[list[TailEntry]], None],
        every: float = PUMP_EVERY,
    ) -> None:
        """Until cancelled, every ``every`` seconds: the lines read since, prepared in a thread with
        the describer and recorder of the moment, kept, and those to show now handed to ``show``."""
        while True:
            await asyncio.sleep(every)
            if self.inbox:
                await self._batch(describer, recorder, show)

    async def _batch(
        self,
        describer: Callable[[], Describe],
        recorder: Callable[[], Recorder | None],
        show: Callable[[list[TailEntry]], None],
    ) -> None:
        async with self.lock:
            generation = self.generation
            lines = self.take()
            batch = asyncio.ensure_future(asyncio.to_thread(self.prepare, lines, self.matches, recorder(), describer()))
            try:
                prepared = await asyncio.shield(batch)
            except asyncio.CancelledError:  # the stream is followed again: the batch read is not lost
                prepared = await batch
                if generation == self.generation:  # (unless the buffer now holds another stream)
                    show(self.deliver(*prepared))
                raise
            show(self.deliver(*prepared))

    @staticmethod
    def prepare(
        lines: list[bytes], matches: Filter | None, recorder: Recorder | None, describe: Describe
    ) -> tuple[list[TailEntry], list[TailEntry]]:
        """In a thread: the batch's entries, and those of them the filter shows (recording them all)."""
        if recorder is not None:
            for raw in lines:
                recorder.write(raw)
        entries = [TailEntry(raw, describe) for raw in lines]
        return entries, StreamBuffer.matching(entries, matches)

    @staticmethod
    def matching(entries: Iterable[TailEntry], matches: Filter | None) -> list[TailEntry]:
        """In a thread: the entries a filter shows (all of them without one)."""
        if matches is None:
            return list(entries)
        return [entry for entry in entries if banner_matches(entry.raw, matches)]

    def deliver(self, entries: list[TailEntry], shown: list[TailEntry]) -> list[TailEntry]:
        """Keep a prepared batch; the entries to show now (none while paused: they wait)."""
        for entry in entries:
            entry.number = self.numbered
            self.numbered += 1
        self.kept.extend(entries)
        if not self.paused:
            return shown
        overflow = len(self.pending) + len(shown) - (self.pending.maxlen or 0)
        self.dropped += max(0, overflow)
        self.pending.extend(shown)
        self._trim_pending()
        return []

    def _trim_pending(self) -> None:
        oldest = self.oldest
        while self.pending and self.pending[0].number < oldest:
            self.pending.popleft()
            self.dropped += 1

    # -- the view --------------------------------------------------------------------------------
    def pause(self) -> list[TailEntry]:
        """Pause or resume; on resuming, the held lines to show."""
        self.paused = not self.paused
        if self.paused:
            self.frozen_at = self.numbered
            return []
        released = list(self.pending)
        self.pending.clear()
        return released

    def apply_view(self, matching: list[TailEntry]) -> list[TailEntry]:
        """A new filter's result over :attr:`kept` (see :meth:`matching`): the lines the view shows.
        While paused, those that arrived after the pause wait."""
        oldest = self.oldest
        matching = [entry for entry in matching if entry.number >= oldest]  # kept may have moved on
        if not self.paused:
            return matching
        self.pending = deque((e for e in matching if e.number >= self.frozen_at), maxlen=self.capacity)
        return [entry for entry in matching if entry.number < self.frozen_at]
