"""The panes' forms as a person meets them in 16 colours and without colour: where the keys are
shows on every widget that can take them, and keys typed into a form stay in the form."""

from __future__ import annotations

import pytest
from rich.segment import Segment
from textual.color import Color
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Select

from spyglass.tui.app import SpyglassApp
from spyglass.tui.screens.savequery import SaveQueryScreen
from tests.tui.helpers import no_blink, screen_text, settle

SIZE = (120, 50)
FORM_PANES = ["alerts", "notifiers", "geo", "org", "directory"]


def cells(app, widget: Widget) -> list[tuple[str, object]]:
    """The widget's cells as the terminal gets them: the app's filters applied (NO_COLOR drops colour)."""
    region = widget.region
    strips = app.screen._compositor.render_strips()
    out = []
    for y in range(region.y, region.bottom):
        strip = strips[y]
        for line_filter in app.get_line_filters():
            strip = strip.apply_filter(line_filter, Color(0, 0, 0))
        for segment in strip.crop(region.x, region.right):
            text, style, _ = segment
            out += [(char, style) for char in text if not Segment(char).control]
    return out


async def focus_shows(app, pilot, widget: Widget) -> int:
    """How many of the widget's cells change when it takes the keys. A text box's cursor is one
    cell, and it blinks: focus must show on more than that."""
    app.screen.set_focus(None)
    await settle(pilot)
    blurred = cells(app, widget)
    widget.focus()
    await settle(pilot)
    focused = cells(app, widget)
    return sum(a != b for a, b in zip(blurred, focused, strict=True))


@pytest.mark.parametrize("colours", ["16-colours", "no-colour"])
@pytest.mark.parametrize("pane_id", FORM_PANES)
async def test_every_form_widget_shows_focus(forms_backend, forms_key, monkeypatch, pane_id, colours):
    if colours == "no-colour":
        monkeypatch.setenv("NO_COLOR", "1")
    app = SpyglassApp(forms_backend.profile(forms_key), theme="spyglass-16", pane=pane_id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        no_blink(app)
        pane = app.query_one(f"#pane-{pane_id}")
        widgets = [w for w in pane.query("*") if w.focusable and w.region.area]
        assert any(isinstance(w, Select | Button) for w in widgets) or pane_id == "org"
        unseen = [f"{type(w).__name__}#{w.id}" for w in widgets if await focus_shows(app, pilot, w) < 2]
        assert unseen == [], unseen


@pytest.mark.parametrize("colours", ["16-colours", "no-colour"])
async def test_the_save_dialog_fields_look_like_fields_and_show_focus(forms_backend, monkeypatch, colours):
    if colours == "no-colour":
        monkeypatch.setenv("NO_COLOR", "1")
    app = SpyglassApp(forms_backend.profile(forms_backend.key()), theme="spyglass-16")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.query_one("#query", Input).value = "port:22"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, SaveQueryScreen)
        no_blink(app)
        fields = list(app.screen.query(Input))
        app.screen.set_focus(None)
        await settle(pilot)
        for field in fields:  # an empty field is marked as one, not only by its grey placeholder
            assert any(style.underline for _, style in cells(app, field)), field.id
        unseen = [w.id for w in fields if await focus_shows(app, pilot, w) < 2]
        assert unseen == [], unseen


@pytest.mark.parametrize("colours", ["16-colours", "no-colour"])
@pytest.mark.parametrize(("pane_id", "selector"), [("search", "#count-only"), ("dns", "#dns-history")])
async def test_a_focused_checkbox_is_in_reverse_video_as_a_list_row_is(
    forms_backend, forms_key, monkeypatch, colours, pane_id, selector
):
    """Issue 45: without colour the checkbox that had the keys was only bold, like a heading."""
    if colours == "no-colour":
        monkeypatch.setenv("NO_COLOR", "1")
    app = SpyglassApp(forms_backend.profile(forms_key), theme="spyglass-16", pane=pane_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        check = app.query_one(selector, Checkbox)
        app.screen.set_focus(None)
        await settle(pilot)
        assert not any(style.reverse for _, style in cells(app, check))
        check.focus()
        await settle(pilot)
        label = "".join(char for char, style in cells(app, check) if style.reverse)
        assert str(check.label) in label, label


async def test_digits_typed_on_a_form_button_or_select_stay_in_the_pane(forms_backend, forms_key):
    app = SpyglassApp(forms_backend.profile(forms_key), theme="spyglass-16", pane="alerts")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for selector in ("#alert-save", "#alert-notifier", "#alert-attach"):
            app.query_one(selector).focus()
            await pilot.press("3", "1")
            await settle(pilot)
            assert app.current_pane() is app.query_one("#pane-alerts"), selector
        app.query_one("#alerts-list").focus()  # from a list, an F-key switches
        await pilot.press("f4")
        await settle(pilot)
        assert app.current_pane() is app.query_one("#pane-geo")
        assert "Geo" in screen_text(app)


async def test_digits_typed_after_esc_left_the_query_box_go_into_it(forms_backend, forms_key):
    """Esc from the query box, a pause, then a port: a term of the query, not a pane switch
    (newcomer trial, major 3: '443' after Esc from the stream's filter opened Account, and was lost)."""
    app = SpyglassApp(forms_backend.profile(forms_key), pane="search")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*"port:22", "escape")
        await settle(pilot)
        assert not isinstance(app.focused, Input)
        await pilot.press(*"443")
        await settle(pilot)
        assert app.current_pane() is app.query_one("#pane-search")
        assert app.query_one("#query", Input).value == "port:22 443"


async def test_a_form_notice_goes_once_what_was_typed_makes_it_untrue(forms_backend, forms_key):
    app = SpyglassApp(forms_backend.profile(forms_key), pane="alerts")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*"office", "enter")  # no networks yet
        await settle(pilot)
        assert "give the networks to watch" in screen_text(app)
        await pilot.press("tab", *"127.0.5.0/3")  # typing: still a problem, said as it is now
        await settle(pilot)
        assert "give the networks to watch" not in screen_text(app)
        await pilot.press("0")
        await settle(pilot)
        text = screen_text(app)
        assert "4 addresses" in text and "is not" not in text and "give the" not in text
        await pilot.press("enter")
        await settle(pilot)
        assert "office" in [a.name for a in app.query_one("#pane-alerts").alerts.values()]
        app.query_one("#alert-name", Input).focus()
        await pilot.press("enter")  # the emptied form's Enter: said, then an alert deleted from the list
        await settle(pilot)
        assert "give the networks to watch" in screen_text(app)
        app.query_one("#alerts-list").focus()
        await pilot.press("D", "D")
        await settle(pilot)
        assert "office" not in [a.name for a in app.query_one("#pane-alerts").alerts.values()]
        assert "give the networks to watch" not in screen_text(app)  # (it stayed for good: newcomer trial 4)

        await app.show_pane("notifiers")
        await settle(pilot)
        pane = app.query_one("#pane-notifiers")
        pane.query_one("#notifier-provider", Select).value = "webhook"
        await settle(pilot)
        assert "webhook: url required" in screen_text(app)
        pane.query_one("#notifier-save", Button).press()
        await settle(pilot)
        assert "webhook needs url" in screen_text(app)
        url = pane.query_one(".notifier-arg", Input)
        url.focus()
        await pilot.press(*"http://127.0.0.1:9/x")
        await settle(pilot)
        text = screen_text(app)
        assert "webhook needs url" not in text and "url required" not in text and "webhook: Enter saves it" in text

        await app.show_pane("org")
        await settle(pilot)
        field = app.query_one("#org-user", Input)
        field.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert "Type the username or e-mail address" in screen_text(app)
        await pilot.press(*"someone")
        await settle(pilot)
        assert "Type the username or e-mail address" not in screen_text(app)
        await pilot.press("enter")  # an invitation is said, whether or not that user exists
        await settle(pilot)
        assert any("Invited someone" in n.message for n in app._notifications), list(app._notifications)
