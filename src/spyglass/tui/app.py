"""The dashboard: the panes of the registry, a status bar, the command palette, help and settings."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, getters, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import ContentSwitcher
from textual.worker import WorkerState

from spyglass.config import Config, Profile, active_profile, config_dir
from spyglass.safetext import clean
from spyglass.tui import keyorder, visualstyle
from spyglass.tui.alertnotices import AlertNotices, signal_problems
from spyglass.tui.blink import CursorBlink, remote_terminal
from spyglass.tui.connection import Connection, KeyRefused, State
from spyglass.tui.console import for_console, linux_console, plain_boxes
from spyglass.tui.linkstatus import LinkStatus
from spyglass.tui.messages import BackendGone, Navigate, Outdated
from spyglass.tui.panes import load_panes, pane_ids
from spyglass.tui.panes.base import CallEnded, CallStarted, Pane, PaneFailure
from spyglass.tui.themes import load_themes, no_color, pick_theme, usable_theme
from spyglass.tui.widgets.footer import KeyFooter
from spyglass.tui.widgets.navbar import NavBar
from spyglass.tui.widgets.statusbar import StatusBar

if TYPE_CHECKING:
    from textual.command import Provider

    from spyglass.client import Clients
    from spyglass.local.launcher import EmbeddedBackend
    from spyglass.tui.dashboard import Dashboard
    from spyglass.tui.screens.help import BindingSection

# Function keys and plain control keys pass through SSH, tmux and screen; alt+digit does not.
GO_TO_PANE = "ctrl+g"


def failure_text(error: BaseException | None) -> str:
    """A failed call in words: the client's errors are written for people; anything else is a bug."""
    from spyglass.client import SpyglassError

    if isinstance(error, (SpyglassError, PaneFailure)):
        return str(error)
    return f"internal error: {type(error).__name__}: {error}"


def spyglass_commands() -> type[Provider]:
    """The palette's own entries, loaded when the palette first opens (textual.command is heavy)."""
    from spyglass.tui.palette import SpyglassCommands

    return SpyglassCommands


class SpyglassApp(keyorder.KeysInTurn, keyorder.EscThenLetter, AlertNotices, LinkStatus):
    TITLE = "spyglass"
    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {spyglass_commands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-normal"), (170, "-wide")]
    BINDINGS = [
        Binding("question_mark", "help", "Help", show=False, id="help"),
        Binding("f1", "help", "Help", id="help.f1"),
        Binding(GO_TO_PANE, "go_to_pane", "Panes", id="go_to_pane"),
        Binding("comma", "settings", "Settings", id="settings"),
        Binding("r", "refresh", "Refresh", id="refresh"),
        Binding("ctrl+r", "reconnect", "Reconnect", id="reconnect"),
        Binding("l", "backend_log", "Backend log", show=False, id="backend_log"),
        Binding("q", "quit", "Quit", id="quit"),
        Binding("ctrl+l", "redraw", "Redraw the screen", show=False, priority=True, id="redraw"),
    ]

    navbar = getters.query_one(NavBar)  # the widgets it drives
    switcher = getters.query_one("#panes", ContentSwitcher)

    def __init__(
        self,
        profile: Profile,
        data: Path | None = None,
        *,
        config: Config | None = None,
        theme: str | None = None,
        keymap: dict[str, str] | None = None,
        pane: str | None = None,
        arg: str | None = None,
        health_interval: float = 60.0,
        started: EmbeddedBackend | None = None,
    ) -> None:
        # NO_COLOR: Textual picks its no-colour filter when the app is made (ANSI colours only).
        super().__init__(ansi_color=True if no_color(os.environ) else None)
        keyorder.install()  # keys that arrive together over SSH stay in order in text boxes
        self.hold_keys()  # keys typed before the first pane has the focus wait for it (_start)
        visualstyle.install()  # a list's cursor in reverse video, where there is no colour
        self.linux_console = linux_console(os.environ)
        self.blink = CursorBlink(self, remote_terminal(os.environ))
        self._restore_boxes = plain_boxes() if self.linux_console else None
        self.config = config if config is not None else Config()
        self.connection = Connection(profile, data, started)
        self.clients: Clients | None = None
        self.backend_info: dict = {}  # what a spyglass backend says it holds (demo data or not)
        self.health_interval = health_interval
        self.panes: list[type[Pane]] = []  # the registry's classes, loaded after the first frame
        self.first_pane = pane or pane_ids()[0]
        self.pending_arg = arg  # run in the first pane once the connection is tried
        self.refresh_armed: str | None = None  # the pane whose costly refresh waits for a second r
        self._switching = asyncio.Lock()  # one pane switch at a time: the bar and the pane in view agree
        self.theme_problems: list[str] = []
        for each in load_themes(config_dir(), self.theme_problems):
            self.register_theme(each)
        self.theme = usable_theme(theme or self.config.theme, self.available_themes, self.theme_problems)
        self.keymap_given = dict(keymap if keymap is not None else self.config.keymap)
        self.keymap: dict[str, str] = {}  # what is in force: the keys given that are key names
        if self.keymap_given:
            from spyglass.tui.screens.help import usable_keymap

            self.keymap = usable_keymap(self.keymap_given)
            self.set_keymap(self.keymap)

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # Panes load and mount after the first frame: the shell and the connection state show first.
        yield NavBar()
        yield ContentSwitcher(id="panes")
        yield StatusBar()
        yield KeyFooter()

    def _clear_note_of(self, call: str) -> None:
        """The status bar's note about ``call`` goes (if the bar is still there: a call can end
        while the app closes)."""
        for status in self.query(StatusBar):
            if status.note.startswith(f"{call}:"):
                status.note = ""

    def on_mount(self) -> None:
        if not self.is_headless:
            end_on_signals(self)
        self.blink.start()
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        self.screen_change_signal.subscribe(self, self._screen_changed)
        self.set_state(self.connection.opening_state)
        self._health_timer = self.set_interval(self.health_interval, self.check_health, pause=True)
        self.call_after_refresh(self._start)

    def _screen_changed(self, screen: Screen) -> None:
        if screen is self.default_screen:  # a dialog over the panes closed
            self._back_in_view()

    def on_app_focus(self) -> None:
        self._back_in_view()  # the terminal is focused again (where it says so): the user was away

    def _back_in_view(self) -> None:
        pane = self.current_pane() if self.panes else None  # (the registry loads after the first frame)
        if pane is not None:
            pane.back_in_view()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown, events.Paste)):
            self.blink.activity()
        await super().on_event(event)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.blink.focused(event.widget)

    async def _start(self) -> None:
        from spyglass.tui.screens.help import keymap_problems

        self.panes = load_panes()
        self.navbar.titles = [
            (cls.TITLE, (self.keys_of(f"pane.{cls.ID}", cls.KEYS).split() or [""])[0]) for cls in self.panes
        ]
        for cls in self.panes:
            if not cls.KEYS:
                continue  # reached from the pane list (ctrl+g) and the pane bar only
            # (not alt+digit: a terminal sends Esc then a digit in one read as that; keyorder)
            for binding in Binding.make_bindings(
                [Binding(cls.KEYS, f"show_pane({cls.ID!r})", cls.TITLE, show=False, id=f"pane.{cls.ID}")]
            ):
                self._bindings.key_to_bindings.setdefault(binding.key, []).append(binding)
        self.refresh_bindings()
        keys = keymap_problems(self.keymap_given, self.binding_sections())
        for problem in [*self.theme_problems, *keys, *signal_problems(self.config.alert_signal)]:
            self.notify(problem, title="config.json", severity="warning", timeout=10, markup=False)
        try:
            await self.show_pane(self.first_pane)
        finally:
            self.release_keys()  # once the focus has moved to the first pane's box (turns wait for it)
        self.connect()

    # -- the connection --------------------------------------------------------------------
    @work(exclusive=True, group="connection", exit_on_error=False)
    async def connect(self) -> None:
        try:
            info = await self.connection.open()
            clients = self.connection.clients
            assert clients is not None  # open() made them
            self.backend_info = await clients.tools.backend_info() or {}
        except Exception as exc:  # a failure to connect is shown, never raised into the UI
            from spyglass.client import APIError

            refused = isinstance(exc, (KeyRefused, APIError))  # reached, but it said no
            self.set_state(State.REFUSED if refused else State.FAILED, str(exc), "ctrl+r retries")
            if not refused and self.clients is None:
                self.keep_connecting()
            self._run_pending_arg()
            return
        self._probe_attempt = 0
        self.stop_following(self.clients)  # a dead backend's clients may still fail a call late
        self.clients = clients
        self.clients.credits.listeners.append(self._credits_changed)
        self.clients.reachability.listeners.append(self._reachability_changed)
        self._credits_changed(self.clients.credits)
        self.follow_alerts(clients)  # fired notifications are said wherever the user is
        self.status.plan = info.plan
        self.set_state(State.CONNECTED)
        if self.connection.note:
            self.report(self.connection.note, error=False)
        self.connection.watch_backend(self._backend_event)
        self._health_timer.resume()
        current = self.current_pane()
        for pane in self.query(Pane):
            # Each reloads when next shown, the one in view now, one that follows a stream at once:
            # no call goes on with the clients of the last connection (closed, or of a dead backend).
            pane.connection_replaced(now=pane is current and not self.pending_arg)
        self._run_pending_arg()

    def _run_pending_arg(self) -> None:
        arg, self.pending_arg = self.pending_arg, None
        pane = self.current_pane()
        if not arg or pane is None:
            return
        if pane.LOADS_WITH_ARG:  # the argument fills a form: the lists load as without one
            pane.run_arg(arg)
            pane.reload()
        else:
            pane.stale = False  # what the argument runs is what the pane shows
            pane.run_arg(arg)

    def _backend_event(self, kind: str, message: str) -> None:
        """The embedded backend died (say so), came back (reconnect to it) or cannot (say so)."""
        if kind == "restarted":
            self.connect()
        else:
            hint = "ctrl+r retries" if kind == "failed" else ""
            self.set_state(
                State.STARTING if kind == "died" else State.FAILED, message.removesuffix(" (ctrl+r to retry)"), hint
            )
            if kind == "failed":
                for pane in self.query(Pane):
                    pane.post_message(BackendGone(message))
        self.report(message, error=kind != "restarted")

    def _credits_changed(self, credits) -> None:
        if self.clients is None or credits is not self.clients.credits:
            return  # another connection's
        spent = (self.status.query_credits, self.status.scan_credits) != (credits.query, credits.scan)
        self.status.query_credits = credits.query
        self.status.scan_credits = credits.scan
        if credits.plan:
            self.status.plan = credits.plan
        if spent:  # panes that show credits reload, now if in view, else when next shown
            for pane in self.query(Pane):
                if pane.FOLLOWS_CREDITS:
                    pane.stale = True
                    if pane is self.current_pane():
                        pane.reload()

    async def reopen(self, profile: Profile | None = None) -> None:
        self._health_timer.pause()
        self.stop_following(self.clients)
        self.clients = None
        for pane in self.query(Pane):
            self.workers.cancel_node(pane)  # its calls hold the clients closed below
        self.backend_info = {}
        await self.connection.close()
        self.connection = Connection(profile or self.connection.requested, self.connection.data)
        self.status.plan = self.status.query_credits = self.status.scan_credits = None
        self.set_state(self.connection.opening_state)
        self.connect()

    def use_profile(self, profile: Profile) -> None:
        self.run_worker(self.reopen(profile), group="connection-switch", exit_on_error=False)

    async def on_unmount(self) -> None:
        if self._restore_boxes is not None:
            self._restore_boxes()
        await self.connection.close()

    # -- every pane's calls: one place reports failures --------------------------------------
    def on_call_started(self, event: CallStarted) -> None:
        self._clear_note_of(event.worker.name)

    def on_call_ended(self, event: CallEnded) -> None:
        worker, pane = event.worker, event.pane
        if worker.state is WorkerState.ERROR:
            message = failure_text(worker.error)
            pane.show_error(message, source=worker.name)
            if pane is not self.current_pane():  # said once: in the pane in view, else where it shows
                self.status.note = f"{worker.name}: {message}"
                self.report(f"{worker.name}: {message}")
        elif worker.state is WorkerState.SUCCESS:
            if pane.error_source == worker.name or pane.moved_on(worker):
                pane.show_error(None)
            self._clear_note_of(worker.name)

    # -- panes -----------------------------------------------------------------------------
    async def show_pane(self, pane_id: str) -> Pane | None:
        """Show a pane, mounting it the first time; a stale pane reloads."""
        async with self._switching:
            return await self._show_pane(pane_id)

    async def _show_pane(self, pane_id: str) -> Pane | None:
        index = next((i for i, cls in enumerate(self.panes) if cls.ID == pane_id), None)
        if index is None:
            return None  # the registry loads just after the first frame
        switcher = self.switcher
        found = switcher.query(f"#pane-{pane_id}")
        if found:
            pane = found.first(Pane)
        else:
            pane = self.panes[index](id=f"pane-{pane_id}")
            pane.display = False  # the switcher shows it below
            await switcher.mount(pane)
        switcher.current = pane.id
        self.navbar.active = index
        self.refresh_armed = None
        self.status.note = ""  # a note speaks for the pane that was in view
        pane.focus_first()
        if pane.stale and self.clients is not None and not self.pending_arg:
            pane.reload()
        return pane

    async def action_show_pane(self, pane_id: str) -> None:
        await self.show_pane(pane_id)

    @on(Navigate)
    async def navigate(self, message: Navigate) -> None:
        pane = await self.show_pane(message.PANE)
        if pane is not None:
            getattr(pane, message.METHOD)(message.arg)

    @on(Outdated)
    def outdated(self, message: Outdated) -> None:
        for pane in self.query(f"#pane-{message.PANE}").results(Pane):
            pane.stale = True  # loads again when next shown

    def on_nav_bar_picked(self, event: NavBar.Picked) -> None:
        self.run_worker(self.show_pane(self.panes[event.index].ID), exit_on_error=False)

    def current_pane(self) -> Pane | None:
        current = self.switcher.visible_content
        return current if isinstance(current, Pane) else None

    def action_go_to_pane(self) -> None:
        self.search_commands(
            [
                (
                    f"{cls.TITLE}  ({self.keys_of(f'pane.{cls.ID}', cls.KEYS) or 'ctrl+g'})",
                    lambda pane_id=cls.ID: self.run_worker(self.show_pane(pane_id), exit_on_error=False),
                    cls.HELP,
                )
                for cls in self.panes
            ],
            placeholder="Go to pane…",
        )

    def action_refresh(self) -> None:
        pane = self.current_pane()
        if pane is None:
            return
        cost = pane.refresh_cost()
        if cost and self.refresh_armed != pane.ID:
            self.refresh_armed = pane.ID
            self.status.note = f"Refresh costs {cost}: press r again to spend it"
            self.set_timer(8, self._disarm_refresh)
            return
        self._disarm_refresh()
        pane.refresh_pane()

    def _disarm_refresh(self) -> None:
        if self.refresh_armed:
            self.refresh_armed = None
            if self.status.note.startswith("Refresh costs"):
                self.status.note = ""

    def action_redraw(self) -> None:
        """Clear the terminal and paint every cell again, as ctrl+l does in htop, less and vim."""
        if self._driver is not None:
            self._driver.write("\x1b[2J")  # what another program wrote there goes too
        self.screen.refresh(self.screen.region)  # the whole screen dirty: a full update, not a diff

    def action_reconnect(self) -> None:
        self.run_worker(self.reopen(), group="connection-switch", exit_on_error=False)

    def action_settings(self) -> None:
        from spyglass.tui.screens.settings import SettingsScreen

        self.push_screen(SettingsScreen(self.config), self._profile_chosen)

    def _profile_chosen(self, profile: Profile | None) -> None:
        if profile is not None:
            self.use_profile(profile)

    def action_backend_log(self) -> None:
        from spyglass.tui.screens.backendlog import BackendLogScreen

        backend = self.connection.backend
        self.push_screen(BackendLogScreen(backend.log_path if backend is not None else None))

    # -- help ------------------------------------------------------------------------------
    def keys_of(self, binding_id: str | None, keys: str) -> str:
        """The keys of a binding as the user has them (the keymap wins), for display."""
        chosen = self.keymap.get(binding_id or "", keys)
        return " ".join(self.get_key_display(Binding(key.strip(), "")) for key in chosen.split(",") if key.strip())

    def get_key_display(self, binding: Binding) -> str:
        shown = for_console(self, super().get_key_display(binding))
        return shown.upper() if shown[:1] == "f" and shown[1:].isdigit() else shown

    def binding_sections(self) -> list[BindingSection]:
        """Every binding by where it works (for help, and for checking the keymap)."""
        from spyglass.tui.screens.help import binding_sections

        return binding_sections(type(self), self.panes, self.keys_of, self.keys_of("go_to_pane", GO_TO_PANE))

    def action_help(self) -> None:
        from spyglass.tui.screens.help import HelpScreen

        sections = [
            (title, text, [(self.keys_of(b.id, b.key), b.description or b.action, b.id or "-") for b in bindings])
            for title, text, bindings in self.binding_sections()
        ]
        self.push_screen(HelpScreen(sections))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for cls in self.panes:
            yield SystemCommand(
                f"Go to {cls.TITLE}",
                cls.HELP or f"Show the {cls.TITLE} pane",
                lambda pane_id=cls.ID: self.run_worker(self.show_pane(pane_id), exit_on_error=False),
            )
        yield SystemCommand("Settings", "Profiles: URLs, key, connection test", self.action_settings)
        yield SystemCommand("Reconnect", "Reconnect to the current profile", self.action_reconnect)
        yield SystemCommand("Backend log", "The embedded backend's recent log lines", self.action_backend_log)
        yield SystemCommand("Help", "List the keys", self.action_help)

    def report(self, message: str, *, error: bool = True) -> None:
        """A toast for a failure or a note; the text is untrusted and shown inert."""
        self.notify(clean(message, max_chars=500), severity="error" if error else "information", markup=False)

    def _remember_theme(self, theme) -> None:
        if self.config.theme != theme.name:
            self.config.theme = theme.name
            self.config.save()


def end_on_signals(app: App) -> None:
    """kill or a hang-up ends the app as ctrl+q does (kill left the terminal unusable: newcomer trial 23)."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        asyncio.get_running_loop().add_signal_handler(signum, partial(app.exit, return_code=128 + signum))


def run_dashboard(
    profile_name: str | None = None,
    data: Path | None = None,
    pane: str | None = None,
    arg: str | None = None,
    started: EmbeddedBackend | None = None,
) -> int:
    """``spyglass [--pane NAME [ARG]]``: 2 with one line on stderr for an unknown pane. ``started``:
    the embedded backend, started before this module loaded (cli/commands/dashboard.py)."""
    if pane is not None and pane not in pane_ids():
        print(f"spyglass: unknown pane {pane!r}; the panes are: {', '.join(pane_ids())}", file=sys.stderr)
        return 2
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "spyglass: the dashboard needs a terminal; from a script use the commands (spyglass --help)",
            file=sys.stderr,
        )
        return 2
    config = Config.load()
    theme = pick_theme(config.theme, os.environ)  # here, not in the app: tests choose their own
    app = SpyglassApp(
        active_profile(profile_name), data, config=config, theme=theme, pane=pane, arg=arg, started=started
    )
    app.run()
    return app.return_code or 0


if TYPE_CHECKING:
    _: type[Dashboard] = SpyglassApp  # what panes take the app for (tui/dashboard.py), checked by mypy
