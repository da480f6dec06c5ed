"""The live-tail pane: the real-time stream, filtered as it arrives, in a bounded ring buffer that
repaints at a capped rate (see widgets/tail.py), with pause, scroll-back, saving and details.

The UI loop only reads bytes off the socket and appends lines: parsing, the client-side filter,
formatting and writing saved banners happen in a thread, a batch at a time, at most ten times a
second. Every queue between the socket and the screen is bounded: past it the oldest lines go
(counted), so the pane never falls behind the stream or grows.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Input, Select, Static

from spyglass.present.service import PRODUCT_WIDTH, product_line
from spyglass.present.stream import stream_line
from spyglass.present.values import get_path, plural, text_of
from spyglass.query import parse
from spyglass.safetext import clean, safe_text
from spyglass.tui.console import dot, on_console
from spyglass.tui.panes.base import OpenHost, Pane, PaneFailure
from spyglass.tui.widgets.tail import Tail, TailEntry

if TYPE_CHECKING:
    from spyglass.client import Clients, StreamState
    from spyglass.streamfiles import GzipLines

KINDS = [
    ("all banners", "banners"),
    ("ASNs", "asn"),
    ("countries", "countries"),
    ("ports", "ports"),
    ("vulns", "vulns"),
]
BUFFER = 5000  # lines kept by default (the buffer box changes it)
MAX_BUFFER = 200_000
PUMP_EVERY = 0.1  # seconds between batches handed to the parsing thread
SPARK = "▁▂▃▄▅▆▇█"
RATE_WINDOW = 20  # seconds of the rate sparkline
DETAIL_DATA_LINES = 40  # of the selected banner's raw data (the detail box shows what its height allows)


def sparkline(values: list[int]) -> str:
    top = max(values, default=0)
    if not top:
        return SPARK[0] * len(values)
    return "".join(SPARK[min(len(SPARK) - 1, v * (len(SPARK) - 1) // top)] for v in values)


def detail_lines(banner: dict) -> list[str]:
    """The selected banner, briefly: who, where, what, and the start of its raw data."""
    country = text_of(get_path(banner, "location.country_name")) or text_of(get_path(banner, "location.country_code"))
    location = ", ".join(t for t in (text_of(get_path(banner, "location.city")), country) if t)
    facts = [
        ("seen", banner.get("timestamp")),
        ("org", banner.get("org")),
        ("asn", banner.get("asn")),
        ("location", location),
        ("hostnames", banner.get("hostnames")),
        ("domains", banner.get("domains")),
        ("product", product_line(banner)),
        ("os", banner.get("os")),
        ("tags", banner.get("tags")),
        ("title", get_path(banner, "http.title")),
        ("server", get_path(banner, "http.server")),
        ("cert", get_path(banner, "ssl.cert.subject.CN")),
        ("cpe", banner.get("cpe23") or banner.get("cpe")),
        ("vulns", list(banner["vulns"]) if isinstance(banner.get("vulns"), dict) else banner.get("vulns")),
    ]
    lines = [stream_line(banner)]
    lines += [f"  {name:<9} {text_of(value, max_chars=300)}" for name, value in facts if text_of(value)]
    data = banner.get("data")
    if isinstance(data, str) and data.strip():
        lines += ["  " + line for line in data.strip().splitlines()[:DETAIL_DATA_LINES]]
    return lines


def banner_matches(raw: bytes, matches: Any) -> bool:
    """Whether the line is a banner the client-side filter keeps (a line that is not one never is)."""
    from spyglass.client.streamparse import loads

    try:
        banner = loads(raw)
    except ValueError:
        return False
    return isinstance(banner, dict) and bool(matches(banner))


NARROW = 100  # columns of the tail below which a line's product column is cut, for the title's sake
NARROW_PRODUCT = 16


def describe(raw: bytes, product_width: int = PRODUCT_WIDTH) -> tuple[str, str]:
    """A tail line: the banner's short inert line, and its address."""
    from spyglass.client.streamparse import loads
    from spyglass.present.search import address

    try:
        banner = loads(raw)
    except ValueError:
        banner = None
    if not isinstance(banner, dict):
        return clean(f"(not a banner) {raw[:200]!r}", one_line=True), ""
    return clean(stream_line(banner, product_width=product_width), one_line=True), address(banner)


class StreamPane(Pane):
    ID = "stream"
    TITLE = "Stream"
    KEYS = "f7,6"
    SECTION = "stream"
    HOME = "#tail"
    WIDGETS = (Tail,)
    HELP = (
        "The live stream of newly collected banners (enterprise). Pick a stream and its values; the "
        "filter box takes the search language (product:nginx -port:80): it applies to what is buffered and "
        "to what arrives; an empty box clears it (lines a filter let go do not come back). "
        "p pauses, up/down scroll back (End: live), Enter opens the host, s saves the buffer, "
        "w records everything from now on (.json.gz in the current directory)."
    )
    BINDINGS = [
        Binding("p,space", "pause", "Pause/resume", id="stream.pause"),
        Binding("slash", "focus_filter", "Filter", id="stream.filter"),
        Binding("s", "save", "Save buffer", id="stream.save"),
        Binding("w", "record", "Record", id="stream.record"),
    ]
    DEFAULT_CSS = """
    StreamPane #stream-bar { height: auto; }
    StreamPane #stream-kind { width: 18; }
    StreamPane #stream-values { width: 1fr; }
    StreamPane #stream-filter { width: 2fr; }
    StreamPane #stream-buffer { width: 10; }
    StreamPane #stream-status { height: 2; color: $text-muted; }
    StreamPane #tail { height: 1fr; border: round $primary 50%; }
    StreamPane #stream-detail { height: 40%; min-height: 8; border: round $primary 50%; display: none; }
    StreamPane #stream-detail.shown { display: block; }
    """

    def focus_first(self) -> None:
        """The stream starts by itself: the keyboard goes to the tail (/ reaches the filter)."""
        self.query_one(Tail).focus()

    def compose(self) -> ComposeResult:
        yield self.compose_error()
        with Horizontal(id="stream-bar"):
            yield Select(KINDS, value="banners", allow_blank=False, compact=True, id="stream-kind")
            yield Input(placeholder="values: 22,443", id="stream-values", compact=True)
            yield Input(placeholder="filter: product:nginx -port:80", id="stream-filter", compact=True)
            yield Input(str(BUFFER), placeholder="buffer", id="stream-buffer", compact=True, type="integer")
        yield Static("", id="stream-status")
        tail = Tail(BUFFER, id="tail")
        tail.border_title = "Live (↑ scroll back, End live, Enter opens the host)"
        yield tail
        detail = Static("", id="stream-detail")
        detail.border_title = "Selected banner"
        yield detail

    def on_mount(self) -> None:
        self.state: StreamState | None = None
        self.inbox: deque[bytes] = deque(maxlen=BUFFER)  # read, not yet parsed
        self.pending: deque[TailEntry] = deque(maxlen=BUFFER)  # parsed while paused
        self.paused = False
        self.matches: Any = None  # the client-side filter, or None for everything
        self.filter_query = ""  # as typed (the box returns to it when left)
        self.filter_text = ""  # as shown in the status line
        self.refiltering = False  # the buffer is being filtered again (a thread)
        self.buffer_lock = asyncio.Lock()  # one batch, refilter or save at a time: each sees the others' result
        self.buffered: tuple[str, str] | None = None  # the stream whose lines the buffer holds
        self.received = 0  # banners read off the stream
        self.shown = 0  # of those, the ones that passed the filter
        self.dropped = 0  # lines this pane let go because it (or the pause) fell too far behind
        self.discarded = 0  # as the server reported (debug events)
        self.rates: deque[int] = deque([0] * RATE_WINDOW, maxlen=RATE_WINDOW)
        self.this_second = 0
        self.recorder: GzipLines | None = None
        self.source = ("banners", "")
        self.set_interval(1.0, self._second)
        self._show_status()

    # -- following the stream -------------------------------------------------------------------
    async def load(self, clients: Clients) -> None:
        """Follow the chosen stream until another is chosen (the pump runs beside it)."""
        kind, values = self.source
        if kind != "banners" and not values.strip():
            raise PaneFailure(f"Give the {kind} to follow, separated by commas")
        if self.error_source == f"{self.TITLE}: load":  # e.g. "give the ports": no longer true
            self.show_error(None)
        client = clients.stream
        options = {"raw": True, "debug": True, "on_state": self._on_state}
        stream = client.banners(**options) if kind == "banners" else getattr(client, kind)(values, **options)
        if self.source != self.buffered:  # another stream: start afresh (a reconnect keeps it all)
            self.buffered = self.source
            self._start_afresh()
        pump = asyncio.create_task(self._pump())
        try:
            async for item in stream:
                if isinstance(item, bytes):
                    if len(self.inbox) == self.inbox.maxlen:
                        self.dropped += 1
                    self.inbox.append(item)
                    self.received += 1
                    self.this_second += 1
                else:
                    self.discarded += item.discarded
        finally:
            pump.cancel()
            await stream.aclose()

    def _start_afresh(self) -> None:
        self.query_one(Tail).clear()
        self.pending.clear()
        self.inbox.clear()
        self.received = self.shown = self.dropped = self.discarded = self.this_second = 0
        self._show_status()

    async def _pump(self) -> None:
        while True:
            await asyncio.sleep(PUMP_EVERY)
            if not self.inbox:
                continue
            async with self.buffer_lock:
                lines, source = list(self.inbox), self.buffered
                self.inbox.clear()
                narrow = self.query_one(Tail).size.width < NARROW
                prepare = partial(self._prepare, lines, self.matches, self.recorder, narrow)
                batch = asyncio.ensure_future(asyncio.to_thread(prepare))
                try:
                    entries = await asyncio.shield(batch)
                except asyncio.CancelledError:  # the stream is followed again: the batch read is not lost
                    entries = await batch
                    if source == self.buffered and self.is_attached:  # (not for another stream, nor on quitting)
                        self._deliver(entries)
                    raise
                self._deliver(entries)

    @staticmethod
    def _prepare(lines: list[bytes], matches: Any, recorder: GzipLines | None, narrow: bool) -> list[TailEntry]:
        """In a thread: filter (and record) a batch. Lines are formatted later, when shown (on a
        narrow tail, with the product cut so that the title shows)."""
        if matches is not None:
            lines = [raw for raw in lines if banner_matches(raw, matches)]
        if recorder is not None:
            for raw in lines:
                recorder.write(raw)
        line_of = partial(describe, product_width=NARROW_PRODUCT) if narrow else describe
        return [TailEntry(raw, line_of) for raw in lines]

    def _deliver(self, entries: list[TailEntry]) -> None:
        self.shown += len(entries)
        if self.paused:
            overflow = len(self.pending) + len(entries) - (self.pending.maxlen or 0)
            self.dropped += max(0, overflow)
            self.pending.extend(entries)
        else:
            self.query_one(Tail).add(entries)

    def _on_state(self, state: StreamState) -> None:
        self.state = state
        self._show_status()

    def _second(self) -> None:
        self.rates.append(self.this_second)
        self.this_second = 0
        self._show_status()

    def _show_status(self) -> None:
        state, tail = self.state, self.query_one(Tail)
        if state is None or state.status == "closed":
            where = "not connected"
        elif state.status == "connecting":
            where = "connecting…"
        elif state.status == "reconnecting":
            left = max(0.0, state.retry_at - time.monotonic())
            reason = clean(state.reason, one_line=True, max_chars=80)
            where = f"reconnecting in {left:.0f} s (attempt {state.attempt}): {reason}"
        else:
            where = f"{dot(self.app)} live" + (f" (missed {state.gap:.1f} s)" if state.gap else "")
        if self.paused:  # the lines wait: the screen is not live, whatever the connection does
            live = where.startswith(dot(self.app))
            where = ("|| paused" if on_console(self.app) else "❚❚ paused") + ("" if live else f" · {where}")
        first = [
            where,
            f"{self.rates[-1]:,}/s {sparkline(list(self.rates))}",
            f"{self.received:,} received",
            f"{self.discarded:,} discarded",
        ]
        if self.dropped:
            first.append(f"{self.dropped:,} dropped here")
        second = [f"buffer {len(tail.ring):,}/{tail.capacity:,}"]
        if self.paused:
            second.append(f"PAUSED: {len(self.pending):,} pending (p resumes)")
        if tail.below:
            second.append(f"↓ {tail.below:,} newer (End)")
        if self.filter_text:
            second.append(f"filter {self.filter_text}" + (" (filtering the buffer…)" if self.refiltering else ""))
        if self.recorder is not None:
            second.append(f"recording {self.recorder.path.name} ({self.recorder.lines:,})")
        status = Text(" · ".join(first), no_wrap=True, overflow="ellipsis")
        status.append("\n" + " · ".join(second))
        self.query_one("#stream-status", Static).update(status)

    # -- choosing -------------------------------------------------------------------------------
    def run_arg(self, arg: str) -> None:
        """``banners``, or a kind and its values: ``ports 22,443``."""
        kind, _, values = arg.strip().partition(" ")
        if kind not in dict((v, k) for k, v in KINDS):
            self.app.notify(
                f"stream: no stream {clean(kind, one_line=True)!r} (banners, asn, countries, ports, vulns)",
                markup=False,
            )
            return
        self.query_one("#stream-kind", Select).value = kind
        self.query_one("#stream-values", Input).value = values.strip()
        self._follow()

    def _follow(self) -> None:
        kind = str(self.query_one("#stream-kind", Select).value)
        self.source = (kind, self.query_one("#stream-values", Input).value.strip())
        self.reload()

    @on(Input.Submitted, "#stream-values")
    def _values_given(self) -> None:
        self._follow()

    @on(Select.Changed, "#stream-kind")
    def _kind_chosen(self, event: Select.Changed) -> None:
        if event.value == "banners" or self.query_one("#stream-values", Input).value.strip():
            self._follow()
        else:
            self.query_one("#stream-values", Input).focus()

    def _field_error(self, field: str, message: str | None) -> None:
        """A field's error shows while it is true; clearing it leaves any other failure shown."""
        if message is not None:
            self.show_error(message, field)
        elif self.error_source == field:
            self.show_error(None)

    @staticmethod
    def _filter_error(text: str) -> str | None:
        errors = parse(text).errors if text.strip() else []  # an empty box clears the filter
        return f"filter: {errors[0]}" if errors else None

    @on(Input.Changed, "#stream-filter")
    def _filter_typed(self, event: Input.Changed) -> None:
        self._field_error("filter", self._filter_error(event.value))

    @on(Input.Submitted, "#stream-filter")
    def _filter_given(self, event: Input.Submitted) -> None:
        from spyglass.query.match import matcher

        text = event.value.strip()
        error = self._filter_error(text)
        self._field_error("filter", error)
        if error:
            return  # the error line says why; what was typed stays until the box is left
        query = parse(text) if text else None
        self.matches = matcher(query) if query is not None and query.terms else None
        self.filter_query = text
        self.filter_text = clean(text, one_line=True, max_chars=60)
        self.refiltering = self.matches is not None
        if self.matches is not None:
            self.call("filter", self._refilter, self.matches)  # a filter still at work is cancelled
        else:
            self.workers.cancel_group(self, "filter")  # cleared: what is buffered stays as it is
        self._show_status()
        self.query_one(Tail).focus()

    @on(Input.Blurred, "#stream-filter")
    def _filter_left(self, event: Input.Blurred) -> None:
        """Leaving the box (Esc) undoes what was not applied: it shows the filter in force."""
        event.input.value = self.filter_query
        self._field_error("filter", None)

    async def _refilter(self, matches: Any) -> None:
        """The buffered and held lines the new filter does not match go (filtered in a thread)."""
        try:
            async with self.buffer_lock:  # after any batch read with the previous filter
                tail = self.query_one(Tail)
                entries = [*tail.ring, *self.pending]
                dropped = await asyncio.to_thread(self._unmatched, entries, matches)
                if dropped:
                    tail.keep(lambda entry: id(entry) not in dropped)
                    self.pending = deque((e for e in self.pending if id(e) not in dropped), maxlen=self.pending.maxlen)
        finally:
            if matches is self.matches:  # a newer filter runs on
                self.refiltering = False
            self._show_status()

    @staticmethod
    def _unmatched(entries: list[TailEntry], matches: Any) -> set[int]:
        """In a thread: the ids of the entries ``matches`` rejects (they stay alive in ``entries``)."""
        return {id(entry) for entry in entries if not banner_matches(entry.raw, matches)}

    @staticmethod
    def _buffer_size(text: str) -> int | None:
        try:
            size = int(text)
        except ValueError:
            return None
        return size if 100 <= size <= MAX_BUFFER else None

    @on(Input.Changed, "#stream-buffer")
    def _buffer_typed(self, event: Input.Changed) -> None:
        if self._buffer_size(event.value) is not None:
            self._field_error("buffer", None)

    @on(Input.Submitted, "#stream-buffer")
    def _buffer_given(self, event: Input.Submitted) -> None:
        size = self._buffer_size(event.value)
        if size is None:
            self._field_error("buffer", f"buffer: between 100 and {MAX_BUFFER:,} lines")
            return
        self._field_error("buffer", None)
        self.query_one(Tail).resize_ring(size)
        self.inbox = deque(self.inbox, maxlen=size)
        self.pending = deque(self.pending, maxlen=size)
        self._show_status()

    @on(Input.Blurred, "#stream-buffer")
    def _buffer_left(self, event: Input.Blurred) -> None:
        event.input.value = str(self.query_one(Tail).capacity)
        self._field_error("buffer", None)

    # -- actions --------------------------------------------------------------------------------
    def action_pause(self) -> None:
        self.paused = not self.paused
        if not self.paused:
            self.query_one(Tail).add(list(self.pending))
            self.pending.clear()
        self._show_status()

    def action_focus_filter(self) -> None:
        self.focus_box("#stream-filter")

    def action_save(self) -> None:
        from spyglass.streamfiles import GzipLines

        path = Path.cwd() / f"spyglass-stream-{datetime.now(UTC):%Y%m%d-%H%M%S}.json.gz"

        async def save() -> None:
            async with self.buffer_lock:  # after a filter being applied to the buffer
                lines = [entry.raw for entry in self.query_one(Tail).ring]
            if not lines:
                self.app.notify("Nothing to save yet", markup=False)
                return

            def write() -> None:
                out = GzipLines(path)
                for line in lines:
                    out.write(line)
                out.close()

            await asyncio.to_thread(write)
            self.app.notify(f"Saved {plural(len(lines), 'banner')} to {clean(str(path), one_line=True)}", markup=False)

        self.call("save", save)

    async def action_record(self) -> None:
        from spyglass.streamfiles import GzipLines

        recorder, self.recorder = self.recorder, None
        if recorder is not None:
            await asyncio.to_thread(recorder.close)
            self.app.notify(
                f"Recorded {plural(recorder.lines, 'banner')} to {clean(str(recorder.path), one_line=True)}",
                markup=False,
            )
        else:
            path = Path.cwd() / f"spyglass-stream-{datetime.now(UTC):%Y%m%d-%H%M%S}-live.json.gz"
            self.recorder = await asyncio.to_thread(GzipLines, path)
        self._show_status()

    async def on_unmount(self) -> None:
        if self.recorder is not None:
            await asyncio.to_thread(self.recorder.close)

    @on(Tail.Selected)
    def _selected(self, event: Tail.Selected) -> None:
        detail = self.query_one("#stream-detail", Static)
        detail.set_class(event.entry is not None, "shown")  # only while scrolled back: live, the tail has the room
        if event.entry is None:
            detail.update("")
            self._show_status()
            return
        from spyglass.client.streamparse import loads

        try:
            banner = loads(event.entry.raw)
        except ValueError:
            banner = None
        first, *rest = detail_lines(banner) if isinstance(banner, dict) else [event.entry.line]
        head = safe_text(first, one_line=True)  # the list's line, whole: cut with "…" at the box's edge
        head.overflow = "ellipsis"
        detail.update(Group(head, safe_text("\n".join(rest), one_line=False, max_chars=4000)))
        self._show_status()

    @on(Tail.Opened)
    def _open(self, event: Tail.Opened) -> None:
        if event.entry.address:
            self.post_message(OpenHost(event.entry.address))
