"""The dashboard: one pane per job, a status bar, the command palette, help and settings."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Footer

from spyglass.config import Config, Profile, active_profile
from spyglass.safetext import clean
from spyglass.tui.connection import Connection, State
from spyglass.tui.panes.base import Pane
from spyglass.tui.themes import DEFAULT_THEME, shipped_themes
from spyglass.tui.widgets.navbar import NavBar
from spyglass.tui.widgets.statusbar import StatusBar

@dataclass(frozen=True)
class PaneSpec:
    """A pane by name: its module loads after the first frame, which keeps start-up fast."""

    title: str
    path: str  # module:Class

    @property
    def id(self) -> str:
        return f"pane-{self.title.lower()}"

    def load(self) -> type[Pane]:
        module, _, name = self.path.partition(":")
        return getattr(importlib.import_module(module), name)


PANES = [
    PaneSpec("Search", "spyglass.tui.panes.search:SearchPane"),
    PaneSpec("Host", "spyglass.tui.panes.host:HostPane"),
    PaneSpec("Geo", "spyglass.tui.panes.geo:GeoPane"),
    PaneSpec("Account", "spyglass.tui.panes.account:AccountPane"),
]


class SpyglassApp(App[None]):
    TITLE = "spyglass"
    CSS_PATH = "app.tcss"
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="help"),
        Binding("f1", "help", "Help", show=False, id="help.f1"),
        Binding("comma", "settings", "Settings", id="settings"),
        Binding("r", "refresh", "Refresh", id="refresh"),
        Binding("ctrl+r", "reconnect", "Reconnect", id="reconnect"),
        Binding("q", "quit", "Quit", id="quit"),
        # Digits when no input has the keyboard; alt+digit always (an input keeps plain digits).
        *(Binding(f"{n},alt+{n}", f"show_pane({n - 1})", f"Show {pane.title}", show=False, id=f"pane.{n}")
          for n, pane in enumerate(PANES, start=1)),
    ]

    def __init__(self, profile: Profile, data: Path | None = None, *, theme: str | None = None,
                 keymap: dict[str, str] | None = None, health_interval: float = 60.0) -> None:
        super().__init__()
        self.connection = Connection(profile, data)
        self.clients = None
        self.backend_info: dict = {}  # what a spyglass backend says it holds (demo data or not)
        self.health_interval = health_interval
        for shipped in shipped_themes():
            self.register_theme(shipped)
        self.theme = theme if theme in self.available_themes else DEFAULT_THEME
        if keymap:
            self.set_keymap(keymap)

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # Panes are mounted after the first frame: the shell and the connection state show first.
        yield NavBar([pane.title for pane in PANES])
        yield ContentSwitcher(id="panes")
        yield StatusBar()
        yield Footer()

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        self.set_state(self.connection.opening_state)
        self._health_timer = self.set_interval(self.health_interval, self.check_health, pause=True)
        self.call_after_refresh(self._mount_panes)

    async def _mount_panes(self) -> None:
        switcher = self.query_one("#panes", ContentSwitcher)
        panes = [spec.load()(id=spec.id) for spec in PANES]
        for pane in panes[1:]:
            pane.display = False  # the switcher hides only the children it had when it mounted
        await switcher.mount_all(panes)
        switcher.current = panes[0].id
        panes[0].focus_first()
        self.connect()

    def set_state(self, state: State, detail: str = "") -> None:
        self.status.state = state
        self.status.detail = detail
        self.status.endpoint = self.connection.endpoint

    # -- the connection --------------------------------------------------------------------
    @work(exclusive=True, group="connection", exit_on_error=False)
    async def connect(self) -> None:
        try:
            info = await self.connection.open()
            self.backend_info = await self.connection.clients.intel.backend_info() or {}
        except Exception as exc:  # a failure to connect is shown, never raised into the UI
            self.set_state(State.FAILED, f"{exc} (ctrl+r to retry)")
            return
        self.clients = self.connection.clients
        self.clients.credits.listeners.append(self._credits_changed)
        self.clients.reachability.listeners.append(self._reachability_changed)
        self._credits_changed(self.clients.credits)
        self.status.plan = info.plan
        self.set_state(State.CONNECTED)
        self.connection.watch_backend(self._backend_event)
        self._health_timer.resume()
        for pane in self.query(Pane):
            pane.reload()

    def _backend_event(self, kind: str, message: str) -> None:
        """The embedded backend died (say so), came back (reconnect to it) or cannot (say so)."""
        if kind == "restarted":
            self.connect()
        else:
            self.set_state(State.STARTING if kind == "died" else State.FAILED, message)
        self.report(message, error=kind != "restarted")

    def _reachability_changed(self, reach) -> None:
        """Any call that loses the server shows at once; the next that reaches it clears it."""
        if reach.reachable:
            self.set_state(State.CONNECTED)
        else:
            self.set_state(State.FAILED, f"{reach.problem} (ctrl+r to reconnect)")

    def _credits_changed(self, credits) -> None:
        self.status.query_credits = credits.query
        self.status.scan_credits = credits.scan
        if credits.plan:
            self.status.plan = credits.plan

    @work(exclusive=True, group="health", exit_on_error=False)
    async def check_health(self) -> None:
        from spyglass.client import APIError, SpyglassError

        if self.clients is None:
            return
        try:
            await self.clients.intel.api_info()  # reachability listeners follow the link itself
        except APIError as exc:  # reached, but refused: a revoked key, an expired plan
            self.set_state(State.FAILED, str(exc))
        except SpyglassError:
            pass

    async def reopen(self, profile: Profile | None = None) -> None:
        self._health_timer.pause()
        self.clients = None
        self.backend_info = {}
        await self.connection.close()
        self.connection = Connection(profile or self.connection.requested, self.connection.data)
        self.status.plan = self.status.query_credits = self.status.scan_credits = None
        self.set_state(self.connection.opening_state)
        self.connect()

    def use_profile(self, profile: Profile) -> None:
        self.run_worker(self.reopen(profile), group="connection-switch", exit_on_error=False)

    async def on_unmount(self) -> None:
        await self.connection.close()

    # -- actions ---------------------------------------------------------------------------
    def action_show_pane(self, index: int) -> None:
        if not 0 <= index < len(PANES) or not self.query(f"#{PANES[index].id}"):
            return  # panes mount just after the first frame
        self.query_one("#panes", ContentSwitcher).current = PANES[index].id
        self.query_one(NavBar).active = index
        self.query_one(f"#{PANES[index].id}", Pane).focus_first()

    def open_pane(self, title: str):
        index = next(i for i, spec in enumerate(PANES) if spec.title == title)
        self.action_show_pane(index)
        return self.query_one(f"#{PANES[index].id}")

    def show_host(self, ip: str) -> None:
        self.open_pane("Host").show_ip(ip)

    def show_geo(self, target: str) -> None:
        self.open_pane("Geo").show_target(target)

    def on_nav_bar_picked(self, event: NavBar.Picked) -> None:
        self.action_show_pane(event.index)

    def current_pane(self) -> Pane | None:
        current = self.query_one("#panes", ContentSwitcher).visible_content
        return current if isinstance(current, Pane) else None

    def action_refresh(self) -> None:
        pane = self.current_pane()
        if pane is not None:
            pane.reload()

    def action_reconnect(self) -> None:
        self.run_worker(self.reopen(), group="connection-switch", exit_on_error=False)

    def action_settings(self) -> None:
        from spyglass.tui.screens.settings import SettingsScreen

        self.push_screen(SettingsScreen())

    def action_help(self) -> None:
        from spyglass.tui.screens.help import HelpScreen

        rows = []
        seen = set()
        for key, active in self.active_bindings.items():
            binding = active.binding
            if binding.action in seen and not binding.show:
                continue
            seen.add(binding.action)
            rows.append((self.get_key_display(binding), binding.description or binding.action,
                         binding.id or "-"))
        self.push_screen(HelpScreen(rows))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for index, pane in enumerate(PANES):
            yield SystemCommand(f"Go to {pane.title}", f"Show the {pane.title} pane",
                                lambda i=index: self.action_show_pane(i))
        yield SystemCommand("Settings", "Profiles: URLs, key, connection test", self.action_settings)
        yield SystemCommand("Reconnect", "Reconnect to the current profile", self.action_reconnect)
        yield SystemCommand("Help", "List the keys", self.action_help)

    def report(self, message: str, *, error: bool = True) -> None:
        """A toast for a failure or a note; the text is untrusted and shown inert."""
        self.notify(clean(message, max_chars=500), severity="error" if error else "information",
                    markup=False)

    def _remember_theme(self, theme) -> None:
        config = Config.load()
        if config.theme != theme.name:
            config.theme = theme.name
            config.save()


def run_dashboard(profile_name: str | None = None, data: Path | None = None) -> int:
    config = Config.load()
    app = SpyglassApp(active_profile(profile_name), data, theme=config.theme, keymap=config.keymap)
    app.run()
    return 0
