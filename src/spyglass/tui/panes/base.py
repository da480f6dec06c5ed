"""What every pane shares: what it declares to the app, client calls in workers (whose failures
the app reports in one place, told by the messages below) and staleness. The messages between
panes are in tui/messages.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from time import monotonic
from typing import TYPE_CHECKING, ClassVar, ParamSpec, cast

from textual import events
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Button, Checkbox, DataTable, Input, OptionList, Select, Static
from textual.worker import Worker, WorkerState

from spyglass.safetext import safe_text
from spyglass.tui.keyorder import KeysGo, KeysWait, one_line
from spyglass.tui.widgets.pagedtable import PagedTable
from spyglass.tui.widgets.queryinput import QueryInput

if TYPE_CHECKING:
    from textual.widget import Widget

    from spyglass.client import Clients
    from spyglass.query.pivot import Pivot
    from spyglass.tui.dashboard import Dashboard


P = ParamSpec("P")
CALL_OVER = (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED)  # a call's end, however it ended
FORM = "form"  # the source of a problem a pane found in its own form, before any call
# Calls that read what a pane shows, on their own (a load, a poll, the row selected): their success
# says nothing of what the user did last, and leaves its error (Pane.moved_on)
READINGS = frozenset({"load", "poll", "log", "detail", "files", "filter"})
WORD_GAP = 1.5  # seconds: a list's key, then a letter typed into the box within it, were one word


class PaneFailure(Exception):
    """A failure a pane has already put in words (the app shows it as it is)."""


class _Call(Message):
    def __init__(self, pane: Pane, worker: Worker) -> None:
        super().__init__()
        self.pane = pane
        self.worker = worker


class CallStarted(_Call):
    """A pane's call (re)started: what its last failure said no longer holds (a call that runs
    until replaced, such as a followed stream, never ends to say so)."""


class CallEnded(_Call):
    """A pane's call finished (any way): bubbles to the app, the one place that reports failures."""


class Pane(VerticalScroll, can_focus=False):
    """A job of the dashboard. Subclasses declare the ClassVars below and implement :meth:`load`,
    which runs in a worker when the pane is first shown, on refresh, and when shown stale.

    Never focused itself: a focused pane shows nothing, so Tab stopped there unseen and what was
    typed next vanished (its widgets take the keys; scrolling follows them)."""

    ID: ClassVar[str] = ""  # the module's name: `--pane ID`, the widget id `pane-ID`
    TITLE: ClassVar[str] = ""
    KEYS: ClassVar[str] = ""  # the keys that show it from anywhere, e.g. "f2,1"
    HELP: ClassVar[str] = ""
    SECTION: ClassVar[str] = ""  # the client section it calls, e.g. "search" (client.search)
    HOME: ClassVar[str] = ""  # the widget that takes the keyboard when Esc leaves an input
    FOLLOWS_CREDITS: ClassVar[bool] = False  # reload when credits change (it shows them)
    # What it shows changes elsewhere too (its own other pane, the CLI, another dashboard): it loads
    # again, a free call, whenever it comes back in view (back_in_view).
    FOLLOWS_ELSEWHERE: ClassVar[bool] = False
    # Its argument (``--pane ID ARG``) only fills its form: the pane loads its lists all the same.
    LOADS_WITH_ARG: ClassVar[bool] = False
    WIDGETS: ClassVar[tuple[type, ...]] = ()  # its own widgets whose bindings help lists with the pane's
    # Where text typed on a list goes (on_key): from these widgets, into this input (else the first)
    TYPED_FROM: ClassVar[tuple[type, ...]] = (DataTable, OptionList)
    TYPED_INTO: ClassVar[str] = ""
    # A list whose keys are no letters (their commands are not printable) -> the box every
    # character typed on it goes to: the alerts' triggers, typed "TRIGGER IP:PORT" to ignore one.
    TYPED_ALL: ClassVar[dict[str, str]] = {}
    # Boxes (by id) of items a space separates (the search language, addresses, words): text typed
    # on a list starts a new item there; glued on, 10.0.0.1 then 5 was another target, 10.0.0.15.
    TYPED_TERMS: ClassVar[frozenset[str]] = frozenset()
    BINDINGS = [Binding("escape", "leave_input", "Leave the input", show=False, id="pane.leave_input")]
    DEFAULT_CSS = """
    Pane { padding: 0 1; }
    Pane > .pane-error { color: $error; height: auto; display: none; }
    Pane > .pane-error.shown { display: block; }
    """

    stale = True  # nothing loaded yet, or loaded from a connection that has since been replaced
    armed: str = ""  # the destructive action a first key press asked about
    last_command: tuple[str, str, float] = ("", "", 0.0)  # a list's key that acted: key, what, when

    def second_press(self, action: str, key: str) -> bool:
        """Whether a destructive key may act: only on its second press within 8 s, so a letter
        typed into the list instead of a box (a D in "Data") asks and never deletes."""
        note = f"Press {key} again to {action}"
        if self.armed == action:
            self.armed = ""
            if self.dashboard.status.note.endswith(f" again to {action}"):
                self.dashboard.status.note = ""  # pressed (that key or another that does it): no longer asks
            return True
        self.armed = action
        self.dashboard.status.note = note
        self.set_timer(8, lambda: self._disarm(action))
        return False

    def _disarm(self, action: str) -> None:
        if self.armed == action:
            self.armed = ""
            self.dashboard.status.note = ""

    def on_key(self, event: events.Key) -> None:
        """Text typed while a table or list has the keys goes to the pane's input (a new term in a
        query box), unless the key is one of the table's, the pane's or the app's commands: digits
        typed as ports never switch panes (nor Esc then digits typed together, which a terminal
        sends as alt+digit: keyorder), letters typed as a folder no longer open the backend log.
        A digit on a form's button does nothing; what is typed on a drop-down searches its choices."""
        if event.key == "escape" and self.armed:  # a second press asked for: Esc says no
            self._disarm(self.armed)
        focused = self.app.focused
        # (one made with type_to_search=False leaves the key to the pane: Directory's sort, + votes)
        searches = getattr(focused, "_type_to_search", True)
        if isinstance(focused, Select) and searches and event.is_printable and event.character != " ":
            event.stop()  # typed on a closed drop-down: a search, never swallowed nor a pane's key (t tests)
            event.prevent_default()
            self.search_choices(focused, event)
            return
        if event.key.isdigit() and isinstance(focused, (Button, Checkbox)):
            event.stop()  # a digit on a form's button is a slip, not a pane switch
            event.prevent_default()
            return
        typed_on = self.list_with_keys()
        if not event.is_printable or not event.character or typed_on is None:
            return
        into = typed_on[1]
        bound = self.app.active_bindings.get(event.key)  # the focus chain's, keymaps applied
        if into is None and bound is not None and (not event.key.isdigit() or bound.node is not self.app):
            self.last_command = (event.key, bound.binding.description, monotonic())
            return  # a command (an app-level digit, a pane switch, is typed instead)
        box = self.focus_text_box(into)
        if box is None:
            return
        event.stop()
        event.prevent_default()
        self.say_what_a_word_lost()
        self.type_into(box, event.character)

    def on_paste(self, event: events.Paste) -> None:
        """A paste while a list has the keys goes where text typed there goes (it was dropped:
        newcomer trial 28), as one line (keyorder.one_line)."""
        typed_on = self.list_with_keys()
        if typed_on is None or not (text := one_line(event.text).strip()):
            return
        box = self.focus_text_box(typed_on[1])
        if box is not None:
            event.stop()
            self.type_into(box, text)

    def list_with_keys(self) -> tuple[Widget, str | None] | None:
        """The list (of TYPED_FROM) that has the keys, and the box TYPED_ALL sends what is typed on
        it to (None: the pane's usual one); None when no such list has them, or when it is an open
        drop-down's, which keeps its own keys."""
        focused = self.app.focused
        if focused is None or not isinstance(focused, self.TYPED_FROM):
            return None
        if any(isinstance(a, Select) for a in focused.ancestors):
            return None
        return focused, next((box for lst, box in self.TYPED_ALL.items() if focused.id == lst.lstrip("#")), None)

    def focus_text_box(self, into: str | None) -> Input | None:
        """The box text typed on a list goes to (``into``, else TYPED_INTO, else the pane's first
        that takes text: a disabled one, Alerts' name while its networks are edited, took the
        letters, lost at the next edit: newcomer trial 8), given the keys at once, as Esc leaves
        it (a Blurred handler then sees it back); None if there is none."""
        into = into or self.TYPED_INTO
        boxes = [self.query_one(into, Input)] if into else self.query(Input)
        box = next((b for b in boxes if b.display and not b.disabled), None)
        if box is not None:
            box.select_on_focus = False  # (its Focus event comes after this key: a selection would lose both)
            self.screen.set_focus(box)
        return box

    def say_what_a_word_lost(self) -> None:
        """A word typed on a list whose first letters were the list's keys ('ssh': s sorts) lost
        them: said, once, so the user knows where they went and how to type them."""
        key, does, when = self.last_command
        self.last_command = ("", "", 0.0)
        if key and monotonic() - when < WORD_GAP:
            self.app.notify(
                f"'{key}' is a key of the list ({does or 'a command'}): it acted and was not typed. "
                "In the box itself every letter is typed.",
                severity="warning",
                markup=False,
            )

    def search_choices(self, choice: Select, key: events.Key) -> None:
        """Open the drop-down and hand it the key: its own type-to-search jumps to the option that
        matches what is typed (the letters that follow reach it, open and focused)."""
        choice.action_show_overlay()
        overlay = choice.query_one(OptionList)
        self.screen.set_focus(overlay, scroll_visible=False)  # now: it starts its search afresh
        overlay.post_message(events.Key(key.key, key.character))

    def type_into(self, box: Input, character: str) -> None:
        """A key typed while a table or list had the keyboard, into the pane's input: after what it
        holds, and in a query box (or one of TYPED_TERMS) as a new term ("443" after "port:22" is
        not "port:22443")."""
        box.action_end()
        query = isinstance(box.parent, QueryInput) or box.id in self.TYPED_TERMS
        term = query and box.value and not box.value.endswith(" ")
        space = " " if term else ""
        box.insert_text_at_cursor(space + character)

    def focus_first(self) -> None:
        """Put the keyboard where the pane's work starts: its first input that takes it, else its
        first widget (Alerts' disabled name box, while its networks are edited, took nothing: no
        widget had the keys, and digits switched panes: newcomer trial 9)."""
        for widget in self.query(Input):
            if widget.focusable:
                widget.focus()
                return
        self.action_leave_input()

    def focus_box(self, selector: str) -> None:
        """`/` and its kin: the box takes the keys with the cursor after what it holds, to add to it."""
        box = self.query_one(selector, Input)
        box.focus()
        box.action_end()

    def action_leave_input(self) -> None:
        if self.armed:  # Esc says no to a second press asked for from an input too (a scan sent twice)
            self._disarm(self.armed)
        home = self.query(self.HOME).first() if self.HOME else self
        # At once, not when idle (focus() waits): keys that came in the same read go to home.
        self.screen.set_focus(home)

    def compose_error(self) -> Static:
        return Static("", classes="pane-error")

    @property
    def dashboard(self) -> Dashboard:
        """The app, typed: what it knows (config, backend info) is read here, never changed."""
        return cast("Dashboard", self.app)

    @property
    def clients(self) -> Clients | None:
        """The app's clients, or None until it is connected."""
        return self.dashboard.clients

    def call(self, what: str, work: Callable[P, Awaitable[object]], *args: P.args, **kwargs: P.kwargs) -> Worker:
        """Run ``work(*args, **kwargs)``, a client call, in a worker; one per ``what`` at a time (a newer
        one cancels the older). A failure is reported by the app (status line, notification, and
        this pane's error line)."""
        return self.run_worker(
            partial(work, *args, **kwargs),
            name=f"{self.TITLE}: {what}",
            group=what,
            exclusive=True,
            exit_on_error=False,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.RUNNING:  # (Worker.StateChanged does not bubble)
            self.post_message(CallStarted(self, event.worker))
        elif event.state in (WorkerState.SUCCESS, WorkerState.ERROR):
            self.post_message(CallEnded(self, event.worker))
        if event.worker in self.keys_wait_for and event.state in CALL_OVER:
            self.keys_wait_for -= {event.worker}
            if not self.keys_wait_for:
                self.post_message(KeysGo())

    def pivot_choice(self) -> Pivot | None:
        """The value selected in this pane's pivot list, for the palette's "pivot on …"."""
        from spyglass.tui.widgets.pivots import PivotList

        for pivot_list in self.query(PivotList):
            if pivot_list.display and pivot_list.selected is not None:
                return pivot_list.selected
        return None

    def on_paged_table_more_wanted(self, event: PagedTable.MoreWanted) -> None:
        """A paged table of this pane reached its end: its next page is a call like any other, one
        that costs asked for first (a second press spends it)."""
        event.stop()
        if event.cost and not self.second_press(f"load the next page ({event.cost})", event.key):
            return
        load = event.table.next_page()
        if load is not None:
            self.call(f"page-{event.table.id}", load)

    def connection_replaced(self, now: bool) -> None:
        """The app has new clients: load with them ``now`` (the pane in view), else when next shown."""
        self.stale = True
        if now:
            self.reload()

    def reload(self) -> None:
        clients = self.clients
        if clients is None:
            return
        self.stale = False
        self.call("load", self.load, clients)
        waiting, self.waiting = self.waiting, None
        if waiting is not None:
            before = set(self.workers)
            waiting()
            self.keys_wait_for = frozenset(self.workers) - before  # the calls it made: the keys go after them
            if not self.keys_wait_for:
                self.post_message(KeysGo())

    waiting: Callable[[], None] | None = None  # what was asked before the connection was open
    keys_wait_for: frozenset[Worker] = frozenset()  # the calls it made once open (keyorder.KeysWait)

    def when_connected(self, action: Callable[[], None]) -> None:
        """``action`` (e.g. the query typed meanwhile) runs once the app connects: the pane in
        view reloads then, another when it is next shown."""
        self.waiting = action
        self.post_message(KeysWait())  # the keys typed after it act once it has
        self.show_error("Not connected yet: this runs as soon as the connection is open.", "waiting")

    async def load(self, clients: Clients) -> None:
        """Fetch what the pane shows; nothing by default."""

    def on_show(self) -> None:
        self.back_in_view()

    def back_in_view(self) -> None:
        """Shown again, a dialog over it closed, or the terminal focused again (the app says the last
        two): a pane that follows what changes elsewhere loads again (a stale one loads anyway)."""
        if self.FOLLOWS_ELSEWHERE and not self.stale:
            self.reload()

    def refresh_cost(self) -> str | None:
        """What a refresh (r) would spend, e.g. "1 query credit"; None when it is free."""
        return None

    def refresh_pane(self) -> None:
        """r: load again (a pane that can spend credits says so in :meth:`refresh_cost`)."""
        self.reload()

    def run_arg(self, arg: str) -> None:
        """Fill the pane's input with ``arg`` and run it (``--pane ID ARG``, or a Navigate message)."""
        self.app.notify(f"The {self.TITLE} pane takes no argument", severity="warning", markup=False)

    error_source: str | None = None  # the call whose failure is shown, cleared when it next succeeds

    # An error the pane said itself goes once any call the user asked for went through (not one that
    # only reads what the pane shows): the Alerts pane kept a refused ignore's error through the
    # attaches that followed (newcomer trials 22 and 23). Not where a pane says one as a call starts
    # and for it (Search: the facets it left out).
    ACTIONS_CLEAR_ERRORS = False

    def moved_on(self, succeeded: Worker) -> bool:
        """Whether ``succeeded`` clears the error shown, whatever said it (ACTIONS_CLEAR_ERRORS)."""
        what = succeeded.group
        return (
            self.ACTIONS_CLEAR_ERRORS
            and self.error_source != "waiting"
            and what not in READINGS
            and not what.startswith("page-")
        )

    def form_problem(self) -> str | None:
        """Why the pane's form cannot be sent as it stands, or None (checked before any call)."""
        return None

    def say_form_problem(self) -> bool:
        """Show the form's problem, if any (it stays only while it holds); whether there was one.
        A problem of "" is one the form shows beside its box already: not said twice."""
        problem = self.form_problem()
        self.show_error(problem or None, source=FORM)
        return problem is not None

    def on_input_changed(self, event: Input.Changed) -> None:
        if self.error_source == FORM:  # typed since: said again, or cleared once the form is right
            self.say_form_problem()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """A form's problem is said while the form has the keys: said at an emptied form's Enter,
        it stayed for good, through alerts deleted from the list since (newcomer trial 4)."""
        if self.error_source == FORM and not isinstance(event.widget, (Input, Button, Select, Checkbox)):
            self.show_error(None)

    def show_error(self, message: str | None, source: str | None = None) -> None:
        """Show (or clear, with None) a failure above the pane's content; data shown stays."""
        self.error_source = source if message else None
        for box in self.query(".pane-error").results(Static):
            box.update(safe_text(message or "", one_line=False, max_chars=500))
            box.set_class(bool(message), "shown")
