"""The one registry of panes, in tab order. A pane is one module here with one ``Pane`` class
that declares its id (the module's name), title, keys, help and client section. Adding a pane
is one new file and one line below. Modules load after the first frame: only names here."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spyglass.tui.panes.base import Pane

PANES = [
    "spyglass.tui.panes.search:SearchPane",
    "spyglass.tui.panes.host:HostPane",
    "spyglass.tui.panes.geo:GeoPane",
    "spyglass.tui.panes.account:AccountPane",
    "spyglass.tui.panes.scans:ScansPane",
    "spyglass.tui.panes.stream:StreamPane",
    "spyglass.tui.panes.alerts:AlertsPane",
    "spyglass.tui.panes.notifiers:NotifiersPane",
    "spyglass.tui.panes.trends:TrendsPane",
    "spyglass.tui.panes.directory:DirectoryPane",
    "spyglass.tui.panes.dns:DnsPane",
]


def pane_ids() -> list[str]:
    """Every pane's id, known without importing a pane (``--pane NAME`` is checked with it)."""
    return [path.partition(":")[0].rsplit(".", 1)[-1] for path in PANES]


def load_panes() -> list[type[Pane]]:
    classes = []
    for path in PANES:
        module, _, name = path.partition(":")
        classes.append(getattr(importlib.import_module(module), name))
    return classes
