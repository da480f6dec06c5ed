"""Scroll what scrolls: move the terminal's rows under a widget up with a scroll region (DECSTBM)
and repaint only the rows that this exposes, instead of every row of the widget.

Textual repaints a widget by rewriting each of its cells; a live tail that moves up one line per
banner then costs its whole area per banner (about 100 times the line itself over a thin link).
Textual has no call for this, so this module reaches into its screen and compositor (Textual 8):
it only scrolls when the screen on the terminal is known to match what Textual last drew, and the
caller repaints the usual way otherwise.

A scroll region spans the terminal's full width, so the rows must hold nothing beside the widget
but what is the same on every row (its own border, its containers' padding and borders); any other
widget on those rows (a side panel, a toast, a drop-down) rules the scroll out.
"""

from __future__ import annotations

from textual.geometry import Region
from textual.screen import Screen
from textual.widget import Widget


def settled(widget: Widget) -> bool:
    """Whether all Textual was asked to draw on the terminal rows of ``widget`` has been written out
    (what waits elsewhere on the screen is drawn where it belongs, scroll or not)."""
    screen = widget.screen
    if screen._layout_required or screen._scroll_required or screen._repaint_required:
        return False
    band = _band(widget)
    visible = screen._compositor.visible_widgets
    dirty = [visible[w][1].intersection(visible[w][0]) for w in screen._dirty_widgets if w in visible]
    return not any(region.overlaps(band) for region in (*dirty, *screen._compositor._dirty_regions))


def _band(widget: Widget) -> Region:
    """The terminal rows of the widget's content, edge to edge: what a scroll region moves."""
    content = widget.content_region
    return Region(0, content.y, widget.screen.size.width, content.height)


def _alone_on_its_rows(widget: Widget, band: Region) -> bool:
    screen = widget.screen
    visible = screen._compositor.visible_widgets
    if widget not in visible:
        return False
    region, clip = visible[widget]
    if clip.intersection(region) != region:  # partly scrolled out of its container
        return False
    ours = {widget, *widget.ancestors}
    return not any(
        other not in ours and clip.intersection(region).overlaps(band) for other, (region, clip) in visible.items()
    )


def scroll_up(widget: Widget, lines: int, exposed: int) -> bool:
    """Scroll the rows of ``widget``'s content up by ``lines`` on the terminal, and mark its last
    ``exposed`` rows (and what lies beside them) to be drawn again; the caller's ``render_line``
    must already draw the scrolled view. False, with nothing done, where that is not safe."""
    app, screen = widget.app, widget.screen
    driver = app._driver
    content = widget.content_region
    if driver is None or app.is_headless or app.is_inline or screen is not app.screen:
        return False
    if not 0 < lines < content.height or not lines <= exposed <= content.height or not settled(widget):
        return False
    band = _band(widget)
    if not _alone_on_its_rows(widget, band):
        return False
    # the nearest container as wide as the terminal repaints the exposed rows: the lines, and the
    # border and padding beside them (the scroll left those rows blank, edge to edge)
    painter = next(
        (node for node in widget.ancestors if isinstance(node, Widget) and node.region.width == band.width),
        None,
    )
    if painter is None or isinstance(painter, Screen):
        return False
    top, bottom = content.y + 1, content.bottom  # 1-based, inclusive
    # a line feed on the region's bottom row scrolls the region: every terminal since the VT100.
    # Where the terminal takes synchronized output, it shows nothing until the update that draws
    # the exposed rows has ended it (Textual opens it again there, and closes it).
    app._begin_update()
    driver.write(f"\x1b[0m\x1b[{top};{bottom}r\x1b[{bottom};1H" + "\n" * lines + "\x1b[r")
    # every line Textual kept of the widget moved: none may be drawn again from its cache
    widget._styles_cache.clear()
    rows = Region(0, content.bottom - exposed, band.width, exposed)
    painter.refresh(rows.translate(-painter.content_region.offset))
    return True
