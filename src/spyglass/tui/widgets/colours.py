from __future__ import annotations

from rich.style import Style
from textual.app import App
from textual.color import Color, ColorParseError


def theme_style(app: App, variable: str, **attrs) -> Style:
    """The current theme's ``variable`` colour (hex or ANSI) as a Rich style."""
    try:
        return Style(color=Color.parse(app.theme_variables[variable]).rich_color, **attrs)
    except (KeyError, ColorParseError):
        return Style(**attrs)


def theme_background(app: App, variable: str, **attrs) -> Style:
    try:
        return Style(bgcolor=Color.parse(app.theme_variables[variable]).rich_color, **attrs)
    except (KeyError, ColorParseError):
        return Style(**attrs)
