"""``?``: every key of the app and of every pane, grouped by where it works, as remapped by the
keymap, with the binding id to remap it; and the check of the keymap itself."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.keys import Keys
from textual.screen import ModalScreen
from textual.widgets import Static

from spyglass.safetext import safe_text
from spyglass.tui.panes.base import Pane

MODIFIERS = {"ctrl", "shift", "alt", "meta", "super", "hyper"}
NAMED_KEYS = {key.value for key in Keys}

HELP_TEXT_MAX = 2000  # a pane's own help, whole (the stream pane's runs past 400 characters)
Section = tuple[str, str, list[tuple[str, str, str]]]  # (title, help, [(keys, does, binding id)])
BindingSection = tuple[str, str, list[Binding]]  # (title, help, the bindings that work there)
EVERYWHERE = (
    "F-keys and ctrl keys work from inside an input too; single keys once Esc has left it"
    " (a digit typed on a list goes to its box, right after Esc too, however fast: F-keys switch panes)."
)


def bindings_of(cls: type, own: bool = False) -> list[Binding]:
    """The Binding objects a class declares (``own``: not those it inherits)."""
    declared = cls.__dict__.get("BINDINGS", []) if own else getattr(cls, "BINDINGS", [])
    return [b for b in declared if isinstance(b, Binding)]


def binding_sections(
    app: type, panes: list[type[Pane]], keys_of: Callable[[str, str], str], pane_list: str
) -> list[BindingSection]:
    """Every binding of ``app`` and its ``panes`` by where it works. ``keys_of(binding id, keys)``:
    the keys as the user has them; ``pane_list``: those that open the pane list (ctrl+g)."""
    from spyglass.tui.screens.export import ExportScreen
    from spyglass.tui.screens.settings import SettingsScreen
    from spyglass.tui.widgets.table import Table

    go_to = [Binding(cls.KEYS, "", f"Go to {cls.TITLE}", id=f"pane.{cls.ID}") for cls in panes if cls.KEYS]
    sections: list[BindingSection] = [
        ("Everywhere", EVERYWHERE, bindings_of(app) + go_to),
        ("Every pane", "", bindings_of(Pane)),
        ("Tables", "Click a column heading to sort by it; again to reverse.", bindings_of(Table)),
    ]
    for cls in panes:
        own = [b for source in (cls, *cls.WIDGETS) for b in bindings_of(source, own=True)]
        # A pane with no key of its own is reached from the pane list.
        keys = keys_of(f"pane.{cls.ID}", cls.KEYS) or pane_list
        sections.append((f"{cls.TITLE} ({keys})", cls.HELP, own))
    for title, screen in (("Settings", SettingsScreen), ("Export", ExportScreen), ("Help", HelpScreen)):
        sections.append((title, "", bindings_of(screen)))
    return sections


def bad_key(key: str) -> bool:
    """Whether ``key`` (one key, e.g. "ctrl+g", "f5", "question_mark", "j") is not a key name."""
    *modifiers, name = key.strip().split("+")
    if not name or any(m not in MODIFIERS for m in modifiers):
        return True
    if len(name) == 1 or name in NAMED_KEYS:
        return False
    try:
        unicodedata.lookup(name.replace("_", " ").upper())
    except KeyError:
        return True
    return False


def usable_keymap(keymap: dict[str, str]) -> dict[str, str]:
    """``keymap`` less the keys that are no key names (keymap_problems says which): an entry left
    with none is dropped, so its binding keeps its own keys (F2 went nowhere: newcomer trial 15)."""
    usable = {}
    for binding_id, keys in keymap.items():
        good = [key.strip() for key in keys.split(",") if not bad_key(key)]
        if good:
            usable[binding_id] = ",".join(good)
    return usable


def keymap_problems(keymap: dict[str, str], sections: list[BindingSection]) -> list[str]:
    """What is wrong in a keymap: binding ids that do not exist, and key names that are not keys."""
    known = {b.id for _, _, bindings in sections for b in bindings if b.id}
    problems = []
    for binding_id, keys in keymap.items():
        if binding_id not in known:
            problems.append(f"keymap: there is no binding {binding_id!r} (? lists them)")
        for key in keys.split(","):
            if bad_key(key):
                problems.append(f"keymap: {binding_id!r}: {key.strip()!r} is not a key name")
    return problems


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark,q", "dismiss", "Close", id="help.close"),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 100; max-width: 100%; height: 100%; max-height: 100%;
        border: round $primary; background: $surface; padding: 0 1; }
    HelpScreen VerticalScroll { height: 1fr; }
    HelpScreen .hint { color: $text-muted; height: auto; }
    """

    def __init__(self, sections: list[Section]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Keys (up/down/pgup/pgdn scroll, Esc closes)"
            with VerticalScroll():
                yield Static(self.keys_table(), id="keys")
            yield Static(
                safe_text(
                    'Remap in config.json: "keymap": {"<binding id>": "<keys>"}. ctrl+g goes to a pane, '
                    "ctrl+p opens the palette: panes, actions, themes; type an IP to open it, or any text to search."
                ),
                classes="hint",
            )

    def keys_table(self) -> Group:
        parts: list[RenderableType] = []
        for title, text, rows in self.sections:
            if not rows and not text:
                continue
            parts.append(Text(title, style="bold underline"))
            if text:
                parts.append(safe_text(text, "italic", max_chars=HELP_TEXT_MAX))
            table = Table.grid(padding=(0, 2))
            table.add_column(no_wrap=True, min_width=14, style="bold")
            table.add_column(ratio=1)
            table.add_column(no_wrap=True, style="dim")
            for keys, description, binding_id in rows:
                table.add_row(safe_text(keys), safe_text(description), safe_text(binding_id))
            parts += [table, Text("")]
        return Group(*parts)

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()
