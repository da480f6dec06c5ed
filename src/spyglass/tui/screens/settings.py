"""Profiles: where to connect and with which key; test a connection before using it."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, ListItem, ListView, Select, Static

from spyglass.config import EMBEDDED, Config, ConfigError, Profile
from spyglass.safetext import safe_text
from spyglass.secrets import mask_key
from spyglass.tui.alertnotices import SIGNALS, signal_text
from spyglass.tui.widgets.footer import KeyFooter

FIELDS = [
    ("name", "Name", "a short name, e.g. work"),
    ("url", "Main API URL", "empty: the embedded backend"),
    ("stream_url", "Stream URL", "default: <main>/stream"),
    ("trends_url", "Trends URL", "default: <main>/trends"),
    ("geonet_url", "Geonet URL", "default: <main>/geonet"),
    ("key", "API key", "the key of your account"),
    ("namespace", "Namespace", "intel"),
    ("rate", "Requests per second", "empty: unpaced (e.g. 1)"),
]


class SettingsScreen(ModalScreen[Profile | None]):
    """Closes with the profile to use now (its "Use" button), else None. Modal, drawn as a whole
    screen: the app's keys stay with the panes behind it (a digit switched the pane there, `q` quit
    the app from the form, `r` reloaded a pane out of view: newcomer trials 8 and 9)."""

    BINDINGS = [Binding("escape", "close", "Back", id="settings.close")]
    DEFAULT_CSS = """
    SettingsScreen { background: $background; &:ansi { background: ansi_default; } }
    SettingsScreen #profiles { width: 28; border: round $primary 50%; }
    SettingsScreen #form { padding: 0 1; }
    SettingsScreen .field { height: 1; margin-bottom: 1; }
    SettingsScreen .field Label { width: 22; color: $text-muted; }
    SettingsScreen .field Input { width: 1fr; }
    SettingsScreen #alert-signal-row { margin-top: 1; }
    SettingsScreen #alert-signal-row Select { width: 1fr; }
    SettingsScreen #key-mask { color: $text-muted; padding-left: 22; }
    SettingsScreen #buttons { height: auto; margin-top: 1; }
    SettingsScreen #buttons Button { margin-right: 1; min-width: 8; width: auto; }
    SettingsScreen #result { margin-top: 1; height: auto; }
    SettingsScreen #result.error { color: $error; }
    SettingsScreen #result.ok { color: $success; }
    """

    def __init__(self, config: Config) -> None:
        super().__init__()
        self.config = config  # the app's, loaded once at start; saved here when changed
        self.names: list[str] = []

    def compose(self) -> ComposeResult:
        with Horizontal():
            profiles = ListView(id="profiles")
            profiles.border_title = "Profiles"
            yield profiles
            form = VerticalScroll(id="form")
            form.can_focus = False  # a focus stop that showed nothing: typed text went nowhere (newcomer trial 4)
            with form:
                for field, label, placeholder in FIELDS:
                    with Horizontal(classes="field"):
                        yield Label(label)
                        yield Input(placeholder=placeholder, id=field, password=field == "key", compact=True)
                yield Static("", id="key-mask")
                with Horizontal(id="buttons"):
                    yield Button("Test connection", id="test", variant="primary")
                    yield Button("Save", id="save")
                    yield Button("Use", id="use", variant="success")
                    yield Button("Delete", id="delete", variant="error")
                yield Static("", id="result")
                with Horizontal(classes="field", id="alert-signal-row"):  # not a profile's: the dashboard's
                    yield Label("Alert fired")
                    signal = self.config.alert_signal if self.config.alert_signal in SIGNALS else "off"
                    choices = [(signal_text(v), v) for v in SIGNALS]
                    yield Select(choices, value=signal, allow_blank=False, compact=True, id="alert-signal")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.refresh_list(select=self.config.active)

    def refresh_list(self, select: str | None = None) -> None:
        self.names = [EMBEDDED, *sorted(n for n in self.config.profiles if n != EMBEDDED)]
        view = self.query_one("#profiles", ListView)
        view.clear()
        for name in self.names:
            mark = "● " if name == self.config.active else "  "
            view.append(ListItem(Label(safe_text(mark + name, one_line=True))))
        index = self.names.index(select) if select in self.names else 0
        view.index = index
        self.fill(self.config.profile(self.names[index]))

    def fill(self, profile: Profile) -> None:
        for field, _, _ in FIELDS:
            value = getattr(profile, field)
            self.query_one(f"#{field}", Input).value = "" if value is None else str(value)
        self.show_key_mask(profile.key)

    def show_key_mask(self, key: str | None) -> None:
        self.query_one("#key-mask", Static).update(safe_text(f"key: {mask_key(key)}"))

    @on(ListView.Selected, "#profiles")
    def picked(self, event: ListView.Selected) -> None:
        index = event.list_view.index or 0
        self.fill(self.config.profile(self.names[index]))
        self.say("")

    @on(Select.Changed, "#alert-signal")
    def signal_chosen(self, event: Select.Changed) -> None:
        if event.value != self.config.alert_signal:
            self.config.alert_signal = str(event.value)
            self.config.save()
            self.say(f"Saved: a fired alert is {signal_text(str(event.value))}.", ok=True)

    @on(Input.Changed, "#key")
    def key_changed(self, event: Input.Changed) -> None:
        self.show_key_mask(event.value or None)

    def form_profile(self) -> Profile | None:
        """The profile the form describes, or None (with the reason shown) if it is invalid."""
        values = {field: self.query_one(f"#{field}", Input).value.strip() for field, _, _ in FIELDS}
        values["namespace"] = values["namespace"] or "intel"
        try:
            return Profile.from_dict(values)
        except ConfigError as exc:
            self.say(str(exc), error=True)
            return None

    def say(self, message: str, *, error: bool = False, ok: bool = False) -> None:
        result = self.query_one("#result", Static)
        result.update(safe_text(message, max_chars=500))
        result.set_class(error, "error")
        result.set_class(ok, "ok")

    def save(self) -> Profile | None:
        profile = self.form_profile()
        if profile is None:
            return None
        if profile.name == EMBEDDED and profile.url:
            self.say("'embedded' is the built-in backend; give this profile another name.", error=True)
            return None
        if profile.name != EMBEDDED:
            self.config.profiles[profile.name] = profile
        self.config.save()
        self.refresh_list(select=profile.name)
        return profile

    @on(Button.Pressed, "#save")
    def pressed_save(self) -> None:
        if self.save():
            self.say("Saved.", ok=True)

    @on(Button.Pressed, "#use")
    def pressed_use(self) -> None:
        profile = self.save()
        if profile is None:
            return
        self.config.active = profile.name
        self.config.save()
        self.dismiss(self.config.profile(profile.name))

    @on(Button.Pressed, "#delete")
    def pressed_delete(self) -> None:
        name = self.query_one("#name", Input).value.strip()
        if name not in self.config.profiles:
            self.say(f"There is no saved profile named {name!r}.", error=True)
            return
        del self.config.profiles[name]
        if self.config.active == name:
            self.config.active = EMBEDDED
        self.config.save()
        self.refresh_list()
        self.say(f"Deleted {name}.", ok=True)

    @on(Button.Pressed, "#test")
    def pressed_test(self) -> None:
        profile = self.form_profile()
        if profile is None:
            return
        if profile.embedded:
            self.say("This profile uses the embedded backend, which the dashboard starts itself.", ok=True)
            return
        self.say("Testing…")
        self.test_connection(profile)

    @work(exclusive=True, group="test", exit_on_error=False)
    async def test_connection(self, profile: Profile) -> None:
        from spyglass.client import Clients, RetryPolicy, SpyglassError

        try:
            async with Clients.from_profile(profile, retry=RetryPolicy(attempts=1)) as clients:
                info = await clients.account.api_info()
        except SpyglassError as exc:
            self.say(f"Failed: {exc}", error=True)
            return
        self.say(
            f"Connected: plan {info.plan}, {info.query_credits:,} query credits, {info.scan_credits:,} scan credits.",
            ok=True,
        )

    def action_close(self) -> None:
        self.dismiss(None)
