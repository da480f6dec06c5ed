"""Themes: shipped and user themes load; the 16-colour theme is picked where the terminal needs it;
in 16 colours and under NO_COLOR the active tab, checkboxes and tables stay distinguishable."""

from __future__ import annotations

import pytest
from rich.color import ColorSystem
from rich.style import Style
from textual.app import App, ComposeResult
from textual.widgets import Checkbox, DataTable, Footer, Input, Tab, Tabs

from spyglass.tui.themes import (
    DEFAULT_THEME,
    SIXTEEN_COLOUR_THEME,
    ThemeError,
    load_themes,
    pick_theme,
    shipped_themes,
    theme_from_toml,
)


@pytest.mark.parametrize(
    ("configured", "environ", "expected"),
    [
        (None, {"TERM": "xterm-256color"}, DEFAULT_THEME),
        (None, {"TERM": "xterm-kitty"}, DEFAULT_THEME),
        (None, {"TERM": "xterm", "COLORTERM": "truecolor"}, DEFAULT_THEME),
        (None, {"TERM": "screen", "COLORTERM": "24bit"}, DEFAULT_THEME),
        (None, {"TERM": "xterm"}, SIXTEEN_COLOUR_THEME),
        (None, {"TERM": "screen"}, SIXTEEN_COLOUR_THEME),
        (None, {"TERM": "linux"}, SIXTEEN_COLOUR_THEME),
        (None, {"TERM": "vt100"}, SIXTEEN_COLOUR_THEME),
        (None, {"TERM": "xterm-16color"}, SIXTEEN_COLOUR_THEME),
        (None, {"TERM": "xterm-256color", "TEXTUAL_COLOR_SYSTEM": "standard"}, SIXTEEN_COLOUR_THEME),
        (None, {"TERM": "xterm", "TEXTUAL_COLOR_SYSTEM": "truecolor"}, DEFAULT_THEME),
        ("nord", {"TERM": "xterm"}, "nord"),  # the user's choice wins over the terminal's guess
        ("nord", {"TERM": "xterm-256color"}, "nord"),
        ("nord", {"TERM": "xterm-256color", "NO_COLOR": "1"}, SIXTEEN_COLOUR_THEME),
        (None, {"TERM": "xterm-256color", "NO_COLOR": "yes"}, SIXTEEN_COLOUR_THEME),
        (None, {"TERM": "xterm-256color", "NO_COLOR": ""}, DEFAULT_THEME),  # empty: not set (no-color.org)
    ],
)
def test_pick_theme(configured, environ, expected):
    assert pick_theme(configured, environ) == expected


def test_shipped_themes_load():
    names = [theme.name for theme in shipped_themes()]
    assert DEFAULT_THEME in names and SIXTEEN_COLOUR_THEME in names
    assert {t.name: t for t in shipped_themes()}[SIXTEEN_COLOUR_THEME].ansi


def test_user_themes_are_picked_up_and_a_broken_one_is_named(tmp_path):
    folder = tmp_path / "themes"
    folder.mkdir()
    (folder / "solar.toml").write_text('name = "solar"\nprimary = "#b58900"\nbackground = "#002b36"\n')
    (folder / "spyglass.toml").write_text('name = "spyglass"\nprimary = "#ff0000"\n')  # replaces the shipped one
    (folder / "typo.toml").write_text('name = "typo"\nprimary = "not-a-colour"\n')
    (folder / "extra.toml").write_text('name = "extra"\nprimary = "#fff"\nsparkles = true\n')
    (folder / "broken.toml").write_text('name = "broken\n')
    (folder / "notes.txt").write_text("not a theme")
    errors: list[str] = []
    themes = load_themes(tmp_path, errors)
    names = [theme.name for theme in themes]
    assert "solar" in names and SIXTEEN_COLOUR_THEME in names
    assert not {"typo", "extra", "broken"} & set(names)
    assert sorted(e.split(":")[0].rsplit("/", 1)[-1] for e in errors) == ["broken.toml", "extra.toml", "typo.toml"]
    # Registered in order, the user's "spyglass" comes last and so replaces the shipped one.
    assert [t.primary for t in themes if t.name == "spyglass"][-1] == "#ff0000"


def test_no_user_theme_dir_is_fine(tmp_path):
    assert [t.name for t in load_themes(tmp_path / "missing")] == [t.name for t in shipped_themes()]


def test_a_bad_theme_file_raises_a_named_error(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('primary = "#fff"\n')  # no name
    with pytest.raises(ThemeError, match="bad.toml"):
        theme_from_toml(path)


# -- what a 16-colour terminal shows ---------------------------------------------------------


class Sampler(App[None]):
    """The widgets whose states must stay apart: tabs, checkboxes, a table, an input, the footer."""

    def __init__(self, theme: str, **kwargs) -> None:
        super().__init__(**kwargs)
        for shipped in shipped_themes():
            self.register_theme(shipped)
        self.theme = theme

    def compose(self) -> ComposeResult:
        yield Tabs(Tab("Search", id="search"), Tab("Host", id="host"), Tab("Geo", id="geo"))
        yield Checkbox("on", value=True, id="on")
        yield Checkbox("off", value=False, id="off")
        table: DataTable = DataTable()
        table.add_columns("ip", "port")
        table.add_rows([("198.18.0.1", "22"), ("198.18.0.2", "443")])
        yield table
        yield Input(placeholder="query")
        yield Footer()


def _in_16(colour, default: str):
    if colour is None or colour.is_default:
        return default
    return colour.downgrade(ColorSystem.STANDARD).number


def seen(style: Style | None) -> tuple:
    """(foreground, background) as a 16-colour terminal shows them, reverse applied."""
    style = style or Style()
    fg, bg = _in_16(style.color, "default-fg"), _in_16(style.bgcolor, "default-bg")
    return (bg, fg) if style.reverse else (fg, bg)


def invisible_text(app: App) -> list[tuple[str, tuple]]:
    """Letters and digits drawn in their own background colour once squeezed into 16 colours."""
    found = []
    for strip in app.screen._compositor.render_strips():
        for segment in strip:
            if any(ch.isalnum() for ch in segment.text):
                fg, bg = seen(segment.style)
                if fg == bg or {fg, bg} == {"default-fg", 7}:  # white on a default (light grey) one
                    found.append((segment.text, (fg, bg)))
    return found


def style_of(app: App, text: str) -> Style:
    for strip in app.screen._compositor.render_strips():
        for segment in strip:
            if segment.text.strip() == text:
                return segment.style or Style()
    raise AssertionError(f"{text!r} is not on the screen")


async def test_16_colour_theme_keeps_every_label_visible():
    app = Sampler(SIXTEEN_COLOUR_THEME)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        assert app.current_theme.ansi
        assert invisible_text(app) == []
        active, inactive = style_of(app, "Search"), style_of(app, "Host")
        assert (active.bold, active.dim) != (inactive.bold, inactive.dim)


async def test_the_truecolour_theme_in_16_colours_is_what_the_check_catches():
    """The reason for picking the 16-colour theme on its own: squeezed into 16 colours, the default
    theme draws labels in their background's colour (and the check above would see it)."""
    app = Sampler(DEFAULT_THEME)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        assert invisible_text(app)


async def test_no_color_keeps_states_apart_by_text_style(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = Sampler(pick_theme(None, {"NO_COLOR": "1"}), ansi_color=True)  # ansi_color: Textual's NoColor filter
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        colours = {
            (s.style.color, s.style.bgcolor)
            for strip in app.screen._compositor.render_strips()
            for s in strip
            if s.style and s.text.strip()
        }
        assert all((fg is None or fg.is_default) and (bg is None or bg.is_default) for fg, bg in colours)
        active, inactive = style_of(app, "Search"), style_of(app, "Host")
        assert (active.bold, active.dim) != (inactive.bold, inactive.dim)
        on, off = (app.query_one(f"#{name}", Checkbox) for name in ("on", "off"))
        on_style = on.get_component_rich_style("toggle--button")
        off_style = off.get_component_rich_style("toggle--button")
        assert (on_style.bold, on_style.dim) != (off_style.bold, off_style.dim)
