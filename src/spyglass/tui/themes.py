"""Themes shipped with spyglass: TOML files beside the package, loaded as Textual themes."""

from __future__ import annotations

import tomllib
from importlib.resources import files

from textual.theme import Theme

DEFAULT_THEME = "spyglass"


def shipped_themes() -> list[Theme]:
    themes = []
    for entry in sorted(files("spyglass.themes").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            themes.append(Theme(**tomllib.loads(entry.read_text())))
    return themes
