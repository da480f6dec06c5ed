"""Themes: the TOML files shipped in ``themes/`` (the package ``spyglass.themes``) and the user's own in
the config dir's ``themes/``, loaded as Textual themes; and the choice of one for this terminal."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from textual.theme import Theme

from spyglass.safetext import clean

DEFAULT_THEME = "spyglass"
SIXTEEN_COLOUR_THEME = "spyglass-16"


class ThemeError(ValueError):
    """A theme file that cannot be used; the message names the file."""


def theme_from_toml(entry: Traversable | Path) -> Theme:
    """A theme from one TOML file, checked now so that a bad colour fails here, not on switching."""
    try:
        theme = Theme(**tomllib.loads(entry.read_text(encoding="utf-8")))
        theme.to_color_system().generate()
    except Exception as exc:  # TOML, unknown or missing keys, colours: all mean "not a usable theme"
        raise ThemeError(f"{entry}: {exc}") from None
    return theme


def _toml_files(entries: Iterable[Traversable | Path]) -> list[Traversable | Path]:
    return sorted((e for e in entries if e.name.endswith(".toml") and e.is_file()), key=lambda e: e.name)


def shipped_themes() -> list[Theme]:
    return [theme_from_toml(entry) for entry in _toml_files(files("spyglass.themes").iterdir())]


def user_themes(config_dir: Path, errors: list[str] | None = None) -> list[Theme]:
    """The themes in ``config_dir/themes/*.toml``; a broken file is skipped and named in ``errors``."""
    folder = Path(config_dir) / "themes"
    if not folder.is_dir():
        return []
    themes = []
    for entry in _toml_files(folder.iterdir()):
        try:
            themes.append(theme_from_toml(entry))
        except ThemeError as exc:
            if errors is not None:
                errors.append(str(exc))
    return themes


def load_themes(config_dir: Path, errors: list[str] | None = None) -> list[Theme]:
    """Shipped themes, then the user's (registered later, so a user theme may replace a shipped one)."""
    return [*shipped_themes(), *user_themes(config_dir, errors)]


def usable_theme(chosen: str | None, available: Mapping[str, Theme], problems: list[str]) -> str:
    """``chosen`` where it is a theme, else the default, said in ``problems`` (an unknown theme
    was passed over without a word: newcomer trial 15)."""
    if chosen and chosen not in available:
        problems.append(f"theme: {clean(chosen, one_line=True, max_chars=60)!r} is no theme: {DEFAULT_THEME} is used")
    return chosen if chosen and chosen in available else DEFAULT_THEME


def no_color(environ: Mapping[str, str]) -> bool:
    """NO_COLOR (no-color.org): set to any non-empty value, no colour is sent to the terminal."""
    return bool(environ.get("NO_COLOR"))


def sixteen_colours(environ: Mapping[str, str]) -> bool:
    """Whether Textual will draw with at most the 16 ANSI colours here.

    The same rules as Rich, which Textual uses to pick its colour system: TEXTUAL_COLOR_SYSTEM
    first, then COLORTERM=truecolor|24bit, then a TERM ending in -256color or -kitty; any other
    TERM (xterm, screen, linux, vt100, ...) gets 16 colours, and dumb or unknown none at all.
    A truecolour theme squeezed into 16 colours loses its contrast (white on white).
    """
    forced = environ.get("TEXTUAL_COLOR_SYSTEM", "auto").strip().lower()
    if forced in ("standard", "windows"):
        return True
    if forced in ("256", "truecolor"):
        return False
    if os.name == "nt":  # Windows consoles report their own features; all current ones do 256 or more
        return False
    if environ.get("COLORTERM", "").strip().lower() in ("truecolor", "24bit"):
        return False
    term = environ.get("TERM", "").strip().lower()
    return term.rpartition("-")[2] not in ("256color", "kitty")


def pick_theme(configured: str | None, environ: Mapping[str, str]) -> str:
    """The theme to start with: NO_COLOR always gets the 16-colour theme (bold and reverse carry
    what colour would), then the user's choice, then the 16-colour theme where the terminal has
    only 16 colours, else the default."""
    if no_color(environ):
        return SIXTEEN_COLOUR_THEME
    if configured:
        return configured
    return SIXTEEN_COLOUR_THEME if sixteen_colours(environ) else DEFAULT_THEME
