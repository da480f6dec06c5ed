"""The bar that always shows where the dashboard is connected, how, and what credits are left."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from spyglass.safetext import clean
from spyglass.tui.connection import State
from spyglass.tui.console import dot
from spyglass.tui.widgets.colours import theme_style

_STATE_COLOUR = {
    State.STARTING: "warning",
    State.CONNECTING: "warning",
    State.CONNECTED: "success",
    State.FAILED: "error",
    State.REFUSED: "error",
}


NOTICE_SHOWN = 120.0  # seconds an alert notice stays in the bar
NOTICE_LEAST = 16  # cells of a notice worth the address's place: the alert's name at least


class StatusBar(Widget):
    # One line: where it is connected and the credits left are in full, and an alert's notice
    # before them is cut to the room left (a toast said it too). A note is read whole: it asks for
    # a second key before credits are spent or something is deleted ("Press ↓ again to load the
    # next page (1 query credit)"), or says why a call failed. While one shows, the rest gives way
    # as needed, least needed first: the plan, the address, the notice, the credits (and without
    # a note, the address to a notice cut to nothing: it shows for NOTICE_SHOWN). Only a
    # state's reason (why the connection failed) wraps, to three lines.
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    StatusBar.-reason { height: auto; max-height: 3; }
    """

    endpoint: reactive[str] = reactive("")
    state: reactive[State] = reactive(State.CONNECTING)
    detail: reactive[str] = reactive("")
    hint: reactive[str] = reactive("")  # what to do about it ("ctrl+r retries"): shown before the detail
    note: reactive[str] = reactive("")  # the last failed call, or what a key is about to spend
    notice: reactive[str] = reactive("")  # the last alert that fired (tui/alertnotices.py)
    plan: reactive[str | None] = reactive(None)
    query_credits: reactive[int | None] = reactive(None)
    scan_credits: reactive[int | None] = reactive(None)

    def watch_detail(self) -> None:
        self._fit()

    def watch_note(self) -> None:
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """A state's reason wraps (to three lines), and so does a note too long for the line with
        the state by its dot alone: what it asks is read whole."""
        self.set_class(bool(self.detail) or self._note_wraps(), "-reason")

    def _note_wraps(self) -> bool:
        return bool(self.note) and self._said(notice=False, named=False).cell_len > self.size.width

    def watch_notice(self) -> None:
        if self.notice:  # said for a while, wherever the user is; the toast said it too
            self.set_timer(NOTICE_SHOWN, lambda shown=self.notice: self._notice_done(shown))

    def _notice_done(self, shown: str) -> None:
        if self.notice == shown:
            self.notice = ""

    def render(self) -> Text:
        said, where = self._said(), self._where(plan=True)
        width = self.size.width
        if self.detail:  # a state's reason, read whole (it wraps): the notice (toasted already) and
            # the plan give way (newcomer trial 18: three lines at 80x24, over the rows)
            said, where = self._said(notice=False), self._where(plan=False)
        elif said.cell_len + where.cell_len <= width:
            pass
        elif self.note:  # read whole: what else is shown gives way, least needed first
            for notice, endpoint, credits in ((True, True, True), (True, False, True), (False, False, True)):
                said, where = self._said(notice), self._where(False, endpoint, credits)
                if said.cell_len + where.cell_len <= width:
                    break
            else:
                where, said = Text(), self._said(notice=False)
                if said.cell_len > width:  # the state by its coloured dot alone, and the note wraps (_fit)
                    return Text.assemble(self._said(notice=False, named=False), overflow="fold")
        else:  # one line: the plan gives way, then the address to an alert's notice cut to less than
            # NOTICE_LEAST (newcomer trial 22: "alert lo…" at 80 columns), then what is said
            where = self._where(plan=False)
            before = self._said(notice=False).cell_len + 3  # (" │ " before the notice)
            if self.notice and width - where.cell_len - before < NOTICE_LEAST:
                where = self._where(plan=False, endpoint=False)
            said.truncate(max(1, width - where.cell_len), overflow="ellipsis")
        return Text.assemble(said, where, no_wrap=not self.detail, overflow="ellipsis")

    def _said(self, notice: bool = True, named: bool = True) -> Text:
        """The state (``named``: its word beside its dot) and what is said about it: its reason,
        the last alert, a note."""
        state_colour = theme_style(self.app, _STATE_COLOUR[self.state])
        text = Text()
        text.append(f"{dot(self.app)} ", style=state_colour)
        if named:
            text.append(self.state.value, style=state_colour + Style(bold=True))
        if self.hint:  # before the detail, which a narrow bar cuts
            text.append(f" ({self.hint})", style=state_colour + Style(bold=True))
        if self.detail:
            text.append(f": {clean(self.detail, one_line=True, max_chars=160)}", style=state_colour)
        if self.notice and notice:
            text.append(" │ ")
            text.append(clean(self.notice, one_line=True, max_chars=160), style=theme_style(self.app, "accent"))
        if self.note:
            text.append(" │ ")
            text.append(clean(self.note, one_line=True, max_chars=200), style=theme_style(self.app, "warning"))
        return text

    def _where(self, plan: bool, endpoint: bool = True, credits: bool = True) -> Text:
        """Where it is connected, on what plan, and the credits left (those asked for)."""
        text = Text()
        if endpoint:
            address = self.endpoint if self.size.width >= 100 else self.endpoint.split("://", 1)[-1]
            text.append(" │ ")
            text.append(clean(address, one_line=True, max_chars=80), style="bold")
        if self.plan and plan:
            text.append(" │ plan ")
            text.append(clean(self.plan, one_line=True), style="bold")
        if not credits:
            return text
        if self.query_credits is not None or self.scan_credits is not None:
            text.append(" │ credits:")
        if self.query_credits is not None:
            text.append(f" {self.query_credits:,}", style="bold")
            text.append(" query")
        if self.scan_credits is not None:
            text.append(f" {self.scan_credits:,}", style="bold")
            text.append(" scan")
        return text
