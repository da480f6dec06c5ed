"""A one-line text box whose text, when it is wider than the box and the box does not have the
keys, ends in "…": Textual's Input cuts it with no sign (`port,org,country,product,v` read as a
whole list of facets, at 80 columns). With the keys, it scrolls as any Input does."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.strip import Strip
from textual.widgets import Input

from spyglass.safetext import fit


class CutInput(Input):
    def render_line(self, y: int) -> Strip:
        room = self.scrollable_content_region.width
        if y or self.has_focus or self.password or cell_len(self.value) <= room:
            return super().render_line(y)
        shown = Text(fit(self.value, room), no_wrap=True, end="")
        console = self.app.console
        strip = Strip(console.render(shown, self.app.console_options.update_width(room)))
        return strip.crop(0, room).extend_cell_length(room).apply_style(self.rich_style)
