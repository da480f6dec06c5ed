"""The values of a banner a search can pivot on: Enter runs the search that finds every banner
holding the value, ``-`` takes it out of the search pane's query (see :mod:`spyglass.query.pivot`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel
from rich.text import Text
from textual.binding import Binding
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from spyglass.query.pivot import Pivot, pivots
from spyglass.safetext import clean
from spyglass.tui.console import for_console
from spyglass.tui.messages import ExcludeInSearch, RunSearch
from spyglass.tui.widgets.cursorlist import CursorList

if TYPE_CHECKING:
    from spyglass.models import Banner

TITLE = "Pivot (Enter searches, - excludes)"
TITLE_NARROW = "Pivot ⏎ / - excl."


class PivotList(CursorList):
    BINDINGS = [
        Binding("minus", "exclude", "Exclude from the search", id="pivots.exclude"),
    ]
    # One line a value, cut with "…" (the whole value is what Enter searches): OptionList wraps its
    # prompts, whatever the Text says, and a fingerprint or a CPE broke mid-value across lines.
    DEFAULT_CSS = """
    PivotList { border: round $primary 50%; text-wrap: nowrap; text-overflow: ellipsis; }
    PivotList:focus { border: round $primary; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(markup=False, id=id)
        self.border_title = TITLE
        self.pivots: list[Pivot] = []
        self.older = False  # the banner is not its service's latest, the one search sees

    def on_resize(self) -> None:
        # Narrow, what the keys do matters more than the word (the name says Pivot already).
        self.border_title = TITLE if self.outer_size.width >= len(TITLE) + 4 else for_console(self.app, TITLE_NARROW)

    def show(self, banner: Banner | dict | None, older: bool = False) -> None:
        """The pivots of ``banner`` (a model or its raw JSON); none without one. ``older``: a
        banner of a host's history that a later one of its service replaced."""
        self.older = older
        raw = (
            banner.model_dump(mode="json", by_alias=True, exclude_none=True)
            if isinstance(banner, BaseModel)
            else banner
        )
        self.pivots = pivots(raw)
        self.clear_options()
        self.add_options(
            [
                Option(Text(clean(f"{p.filter} {p.value}", one_line=True), no_wrap=True, overflow="ellipsis"))
                for p in self.pivots
            ]
        )
        if self.pivots:
            self.highlighted = 0

    @property
    def selected(self) -> Pivot | None:
        index = self.highlighted
        return self.pivots[index] if index is not None and 0 <= index < len(self.pivots) else None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if 0 <= event.option_index < len(self.pivots):
            self.post_message(RunSearch(self.pivots[event.option_index].query))
            if self.older:  # (newcomer trial 17: it found nothing, and nothing said why)
                self.app.notify(
                    "Search sees each service's latest banner; this one is from the host's history, so "
                    "the search finds the services that hold this value now, if any.",
                    title="Pivot from an older banner",
                    markup=False,
                )

    def action_exclude(self) -> None:
        if self.selected is not None:
            self.post_message(ExcludeInSearch(self.selected.term))
