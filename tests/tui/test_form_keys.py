"""Where the keys go in the alerts and notifiers forms (issue 45, minor 1): Tab stops only where
something shows it has the keys (the directory's too: a newcomer met an unseen stop after its
Tags), a drop-down keeps them after a pick and takes typed letters as a search, and a focused
borderless box shows its focus in 256 colours with the cursor still."""

from __future__ import annotations

import pytest
from rich.color import ColorSystem
from textual.widgets import Input, Select

from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.base import Pane
from tests.tui.helpers import screen_text, settle
from tests.tui.test_forms import cells


@pytest.mark.parametrize("pane_id", ["notifiers", "alerts", "directory"])
async def test_tab_stops_only_on_widgets_that_show_they_have_the_keys(forms_backend, forms_key, pane_id):
    app = SpyglassApp(forms_backend.profile(forms_key), pane=pane_id)
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot)
        stops = []
        for _ in range(12):  # more than the form has: round it at least once
            await pilot.press("tab")
            await settle(pilot)
            focused = app.focused
            stops.append(f"{type(focused).__name__}#{focused.id}" if focused else "nothing")
            assert focused is not None and not isinstance(focused, Pane), stops
            assert focused.region.area, stops


async def test_a_picked_provider_keeps_the_keys_on_the_drop_down_and_tab_goes_to_its_argument(forms_backend, forms_key):
    app = SpyglassApp(forms_backend.profile(forms_key), pane="notifiers")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        provider = app.query_one("#notifier-provider", Select)
        await pilot.press("n")  # a new notifier, from the list: the form starts on the provider
        await settle(pilot)
        assert app.focused is provider
        await pilot.press("enter")  # the drop-down
        await settle(pilot)
        values = [value for _, value in provider._options]  # the blank first, highlighted
        await pilot.press(*["down"] * values.index("webhook"), "enter")
        await settle(pilot)
        assert provider.value == "webhook" and app.focused is provider  # where the cursor was
        await pilot.press("tab", *"http://127.0.0.1:9/typed")
        await settle(pilot)
        url = app.query_one(".notifier-arg", Input)
        assert url.name == "url" and url.value == "http://127.0.0.1:9/typed"
        assert "Sending a test" not in screen_text(app)


@pytest.mark.parametrize(("pane_id", "selector"), [("notifiers", "#notifier-provider"), ("alerts", "#alert-notifier")])
async def test_letters_typed_on_a_drop_down_open_it_at_the_matching_option(forms_backend, forms_key, pane_id, selector):
    app = SpyglassApp(forms_backend.profile(forms_key), pane=pane_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        choice = app.query_one(selector, Select)
        choice.focus()
        await settle(pilot)
        prompts = [str(prompt) for prompt, value in choice._options if value != Select.NULL]
        wanted = prompts[-1]  # not the first: the cursor would be there anyway
        await pilot.press(*wanted[:3])  # "t" alone would send the listed notifier a test
        await settle(pilot)
        assert choice.expanded, "the letters were swallowed"
        await pilot.press("enter")
        await settle(pilot)
        assert str(dict((v, p) for p, v in choice._options)[choice.value]) == wanted
        assert app.focused is choice and "Sending a test" not in screen_text(app)


def eight_bit(app, widget) -> list[tuple[object, ...]]:
    """What marks the widget's cells in a 256-colour terminal: the background's colour number,
    reverse video, underline (a text colour one grey step lighter is no mark)."""
    out = []
    for _, style in cells(app, widget):
        background = style.bgcolor.downgrade(ColorSystem.EIGHT_BIT).number if style.bgcolor else None
        out.append((background, style.reverse, style.underline))
    return out


@pytest.mark.parametrize(
    ("pane_id", "selector"),
    [("notifiers", "#notifier-description"), ("alerts", "#alert-name"), ("notifiers", "#notifier-provider")],
)
async def test_a_focused_borderless_box_shows_it_in_256_colours_with_the_cursor_still(
    forms_backend, forms_key, monkeypatch, pane_id, selector
):
    monkeypatch.setenv("SSH_CONNECTION", "192.0.2.1 50000 192.0.2.2 22")  # over SSH: it never blinks
    app = SpyglassApp(forms_backend.profile(forms_key), pane=pane_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        box = app.query_one(selector)
        app.screen.set_focus(None)
        await settle(pilot)
        blurred = eight_bit(app, box)
        box.focus()
        await settle(pilot)
        assert not getattr(box, "cursor_blink", False)
        focused = eight_bit(app, box)
        changed = sum(a != b for a, b in zip(blurred, focused, strict=True))
        assert changed > 1, "only the cursor's cell shows the focus"  # a cursor is one cell
