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
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Input, Select, Static

from spyglass.present.service import PRODUCT_WIDTH
from spyglass.present.stream import detail_lines, quiet_stream_hint, stream_line
from spyglass.present.values import number, plural
from spyglass.query import parse
from spyglass.safetext import clean, safe_text
from spyglass.tui.console import dot, for_console, on_console
from spyglass.tui.messages import BackendGone, OpenHost
from spyglass.tui.panes.base import Pane, PaneFailure
from spyglass.tui.streambuffer import BUFFER, Describe, Filter, StreamBuffer, TailEntry
from spyglass.tui.widgets.boxes import put_text
from spyglass.tui.widgets.pivots import PivotList
from spyglass.tui.widgets.statuslines import StatusLines
from spyglass.tui.widgets.tail import Tail

if TYPE_CHECKING:
    from spyglass.client import Clients, StreamState
    from spyglass.streamfiles import GzipLines

KINDS = [
    ("all banners", "banners"),
    ("ASNs", "asn"),
    ("countries", "countries"),
    ("ports", "ports"),
    ("vulns", "vulns"),
    ("my alerts", "alert"),  # values: none (every alert of the account), or one alert's name or id
]
MAX_BUFFER = 200_000
SPARK = "▁▂▃▄▅▆▇█"
GAP_SHOWN = 10.0  # seconds the time missed by a reconnect stays in the status line


def sparkline(values: list[int]) -> str:
    top = max(values, default=0)
    if not top:
        return SPARK[0] * len(values)
    return "".join(SPARK[min(len(SPARK) - 1, v * (len(SPARK) - 1) // top)] for v in values)


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


def filter_error(text: str) -> str | None:
    """What is wrong with the filter box's text, or None (an empty box clears the filter)."""
    errors = parse(text).errors if text.strip() else []
    return f"filter: {errors[0]}" if errors else None


class StreamPane(Pane):
    ID = "stream"
    TITLE = "Stream"
    KEYS = "f7,6"
    SECTION = "stream"
    HOME = "#tail"
    WIDGETS = (Tail,)
    HELP = (
        "The live stream of newly collected banners (enterprise). Pick a stream and its values ('my alerts' follows "
        "your alerts' networks, or one alert given by its name); the filter box takes the search language "
        "(product:nginx -port:80): it shows the buffered lines that match and those that arrive; an empty box clears "
        "it and shows the whole buffer again. p pauses, up/down scroll back (End: live), Enter opens the host, Tab "
        "reaches the selected banner's values to pivot on, s saves the buffer, w records everything from now on "
        "(.json.gz in the current directory)."
    )
    TYPED_FROM = (*Pane.TYPED_FROM, Tail)  # text typed on the live list: a filter
    TYPED_INTO = "#stream-filter"
    TYPED_TERMS = frozenset({"stream-filter"})  # the search language: port:443 then xy is two terms
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
    StreamPane #stream-selected { height: 40%; min-height: 8; display: none; }
    StreamPane #stream-selected.shown { display: block; }
    StreamPane #stream-detail { width: 2fr; height: 1fr; border: round $primary 50%; }
    StreamPane #stream-pivots { width: 1fr; height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state: StreamState | None = None
        self.connected_at = 0.0  # time.monotonic() of the last (re)connection, for the gap's sake
        self.gone = ""  # why the stream is no longer followed, when the app gave up its backend
        self.buffer = StreamBuffer(BUFFER)
        self.filter_text = ""  # as shown in the status line
        self.refiltering = False  # the buffer is being filtered again (a thread)
        self.buffered: tuple[str, str] | None = None  # the stream whose lines the buffer holds
        self.recorder: GzipLines | None = None
        self.source = ("banners", "")

    def focus_first(self) -> None:
        """The stream starts by itself: the keyboard goes to the tail (/ reaches the filter)."""
        self.query_one(Tail).focus()

    def compose(self) -> ComposeResult:
        yield self.compose_error()
        with Horizontal(id="stream-bar"):
            yield Select(KINDS, value="banners", allow_blank=False, compact=True, id="stream-kind")
            yield Input(placeholder="values: 22,443", id="stream-values", compact=True)
            yield Input(
                placeholder="filter: product:nginx -port:80", id="stream-filter", compact=True, select_on_focus=False
            )
            yield Input(str(BUFFER), placeholder="buffer", id="stream-buffer", compact=True, type="integer")
        yield StatusLines(id="stream-status")
        tail = Tail(BUFFER, id="tail")
        tail.border_title = for_console(self.app, "Live (↑ scroll back, End live, Enter opens the host)")
        yield tail
        with Horizontal(id="stream-selected"):
            detail = Static("", id="stream-detail")
            detail.border_title = "Selected banner"
            yield detail
            yield PivotList(id="stream-pivots")

    def on_mount(self) -> None:
        self.set_interval(1.0, self._second)
        self._show_status()

    # -- following the stream -------------------------------------------------------------------
    async def load(self, clients: Clients) -> None:
        """Follow the chosen stream until another is chosen (the pump runs beside it)."""
        kind, values = self.source
        self.gone = ""
        if kind not in ("banners", "alert") and not values.strip():
            raise PaneFailure(f"Give the {kind} to follow, separated by commas")
        if self.error_source == f"{self.TITLE}: load":  # e.g. "give the ports": no longer true
            self.show_error(None)
        self._say_why_it_may_stay_empty()
        client = clients.stream
        options = {"raw": True, "debug": True, "on_state": self._on_state}
        if kind == "alert":
            stream = client.alert(await self._alert_id(clients, values.strip()), **options)
        else:
            stream = client.banners(**options) if kind == "banners" else getattr(client, kind)(values, **options)
        if self.source != self.buffered:  # another stream: start afresh (a reconnect keeps it all)
            self.buffered = self.source
            self._start_afresh()
        pump = asyncio.create_task(self.buffer.pump(self._describer, lambda: self.recorder, self._show_batch))
        try:
            async for item in stream:
                if isinstance(item, bytes):
                    self.buffer.read(item)
                else:
                    self.buffer.discarded += item.discarded
        finally:
            pump.cancel()
            await stream.aclose()

    @staticmethod
    async def _alert_id(clients: Clients, name: str) -> str | None:
        """The alert called ``name`` (its name, any case, or its id); None for every alert."""
        if not name:
            return None
        from spyglass.present.alerts import alerts_meant

        found, wrong = alerts_meant(await clients.alerts.list(), name)
        if len(found) > 1:  # (newcomer trial 18: it followed one of two, saying nothing)
            raise PaneFailure(clean(str(wrong), one_line=True, max_chars=300))
        if not found:
            raise PaneFailure(f"No alert named {clean(name, one_line=True, max_chars=80)!r}: see the Alerts pane")
        return found[0]

    def _say_why_it_may_stay_empty(self) -> None:
        """A spyglass backend that collects nothing live: the tail says so, as ``serve`` does."""
        info = self.dashboard.backend_info
        rate = number(info.get("demo_rate"))  # another version's backend may say anything: no hint then
        hint = quiet_stream_hint(bool(info.get("demo")), rate) if rate is not None else None
        tail = self.query_one(Tail)
        tail.empty = f"Nothing has arrived: {hint}." if hint else ""
        tail.refresh()

    def connection_replaced(self, now: bool) -> None:
        """A stream being followed is followed on the new clients at once, in view or not: the old
        ones are closed, or reach a backend that is gone."""
        super().connection_replaced(now or (self.state is not None and not self.gone))

    def _start_afresh(self) -> None:
        self.query_one(Tail).clear()
        self.buffer.clear()
        self._show_status()

    def _describer(self) -> Describe:
        """How the next batch's lines read: on a narrow tail, the product is cut so that the title shows."""
        narrow = self.query_one(Tail).size.width < NARROW
        return partial(describe, product_width=NARROW_PRODUCT) if narrow else describe

    def _show_batch(self, shown: list[TailEntry]) -> None:
        if self.is_attached:  # (a batch that ends as the app quits)
            tail = self.query_one(Tail)
            tail.add(shown)
            tail.drop_older(self.buffer.oldest)

    def _on_state(self, state: StreamState) -> None:
        if state.status == "connected":
            self.connected_at = time.monotonic()
        self.state = state
        self._show_status()

    def on_backend_gone(self, message: BackendGone) -> None:
        """No more reconnecting: the stream stops, and the status line says why."""
        self.gone = "the embedded backend was given up (ctrl+r retries)"
        self.workers.cancel_group(self, "load")
        self._show_status()

    def _second(self) -> None:
        self.buffer.second()
        self._show_status()

    def _show_status(self) -> None:
        """Two lines, each cut rather than wrapped: the connection, the buffer and the rate first."""
        state, tail, buffer = self.state, self.query_one(Tail), self.buffer
        if self.gone:
            where = f"stopped: {self.gone}"
        elif state is None or state.status == "closed":
            reason = clean(state.reason, one_line=True, max_chars=80) if state else ""
            where = "not connected" + (f": {reason}" if reason else "")  # (a refusal is said above)
        elif state.status == "connecting":
            where = "connecting…"
        elif state.status == "reconnecting":
            left = max(0.0, state.retry_at - time.monotonic())
            reason = clean(state.reason, one_line=True, max_chars=80)
            where = f"reconnecting in {left:.0f} s (attempt {state.attempt}): {reason}"
        else:
            recent = time.monotonic() - self.connected_at < GAP_SHOWN
            where = f"{dot(self.app)} live" + (f" (missed {state.gap:.1f} s)" if state.gap and recent else "")
        if buffer.paused:  # the lines wait: the screen is not live, whatever the connection does
            live = where.startswith(dot(self.app))
            where = ("|| paused" if on_console(self.app) else "❚❚ paused") + ("" if live else f" · {where}")
        held = f"buffer {len(buffer.kept):,}/{buffer.capacity:,}"
        if self.filter_text:
            held += f" ({len(tail.ring):,} shown)"
        first = [where, held, f"{buffer.rates[-1]:,}/s {sparkline(list(buffer.rates))}"]
        second = []
        if buffer.paused:
            second.append(f"PAUSED: {len(buffer.pending):,} pending (p resumes)")
        if tail.below:
            second.append(f"↓ {tail.below:,} newer (End)")
        if self.filter_text:
            second.append(f"filter {self.filter_text}" + (" (filtering the buffer…)" if self.refiltering else ""))
        if self.recorder is not None:
            second.append(f"recording {self.recorder.path.name} ({self.recorder.lines:,})")
        second += [f"{buffer.received:,} received", f"{buffer.discarded:,} discarded"]
        if buffer.dropped:
            second.append(f"{buffer.dropped:,} dropped here")
        status = Text(no_wrap=True, overflow="ellipsis")
        status.append(for_console(self.app, " · ".join(first) + "\n" + " · ".join(second)))
        self.query_one(StatusLines).update(status)

    # -- choosing -------------------------------------------------------------------------------
    def run_arg(self, arg: str) -> None:
        """``banners``, or a kind and its values: ``ports 22,443``, ``alert`` (every alert) or ``alert office``."""
        kind, _, values = arg.strip().partition(" ")
        if kind not in dict((v, k) for k, v in KINDS):
            self.app.notify(
                f"stream: no stream {clean(kind, one_line=True)!r} (banners, asn, countries, ports, vulns, alert)",
                markup=False,
            )
            return
        self.query_one("#stream-kind", Select).value = kind
        put_text(self.query_one("#stream-values", Input), values.strip())
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
        if event.value in ("banners", "alert") or self.query_one("#stream-values", Input).value.strip():
            self._follow()
        else:
            self.query_one("#stream-values", Input).focus()

    def _field_error(self, field: str, message: str | None) -> None:
        """A field's error shows while it is true; clearing it leaves any other failure shown."""
        if message is not None:
            self.show_error(message, field)
        elif self.error_source == field:
            self.show_error(None)

    @on(Input.Changed, "#stream-filter")
    def _filter_typed(self, event: Input.Changed) -> None:
        self._field_error("filter", filter_error(event.value))

    @on(Input.Submitted, "#stream-filter")
    def _filter_given(self, event: Input.Submitted) -> None:
        from spyglass.query.match import matcher

        text = event.value.strip()
        error = filter_error(text)
        self._field_error("filter", error)
        if error:
            return  # the error line says why; what was typed stays
        query = parse(text) if text else None
        self.buffer.matches = matcher(query) if query is not None and query.terms else None
        self.filter_text = clean(text, one_line=True, max_chars=60)
        self.refiltering = True
        self.call("filter", self._refilter, self.buffer.matches)  # a filter still at work is cancelled
        self._show_status()
        self.query_one(Tail).focus()

    async def _refilter(self, matches: Filter | None) -> None:
        """The view shows the kept lines the filter matches (all of them without one)."""
        try:
            async with self.buffer.lock:  # after any batch read with the previous filter
                kept = list(self.buffer.kept)
                matching = await asyncio.to_thread(self.buffer.matching, kept, matches)
                self.query_one(Tail).show(self.buffer.apply_view(matching))
        finally:
            if matches is self.buffer.matches:  # a newer filter runs on
                self.refiltering = False
            self._show_status()

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
        self.buffer.resize(size)
        tail = self.query_one(Tail)
        tail.resize_ring(size)
        tail.drop_older(self.buffer.oldest)
        self._show_status()

    @on(Input.Blurred, "#stream-buffer")
    def _buffer_left(self, event: Input.Blurred) -> None:
        event.input.value = str(self.query_one(Tail).capacity)
        self._field_error("buffer", None)

    # -- actions --------------------------------------------------------------------------------
    def action_pause(self) -> None:
        self.query_one(Tail).add(self.buffer.pause())
        self._show_status()

    def action_focus_filter(self) -> None:
        self.focus_box("#stream-filter")

    def action_save(self) -> None:
        from spyglass.streamfiles import GzipLines

        path = Path.cwd() / f"spyglass-stream-{datetime.now(UTC):%Y%m%d-%H%M%S}.json.gz"

        async def save() -> None:
            async with self.buffer.lock:  # after the batch being kept
                # The buffer, as the key says: every line kept, whatever the filter shows.
                lines = [entry.raw for entry in self.buffer.kept]
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
        pivots = self.query_one(PivotList)
        # only while scrolled back: live, the tail has the room
        self.query_one("#stream-selected").set_class(event.entry is not None, "shown")
        if event.entry is None:
            detail.update("")
            pivots.show(None)
            self._show_status()
            return
        from spyglass.client.streamparse import loads

        try:
            banner = loads(event.entry.raw)
        except ValueError:
            banner = None
        pivots.show(banner)
        first, *rest = detail_lines(banner) if isinstance(banner, dict) else [event.entry.line]
        head = safe_text(first, one_line=True)  # the list's line, whole: cut with "…" at the box's edge
        head.overflow = "ellipsis"
        detail.update(Group(head, safe_text("\n".join(rest), one_line=False, max_chars=4000)))
        self._show_status()

    @on(Tail.Opened)
    def _open(self, event: Tail.Opened) -> None:
        if event.entry.address:
            self.post_message(OpenHost(event.entry.address))
