"""Where the keyboard is when a pane opens: on what the footer's keys act on."""

from __future__ import annotations

from textual.widgets import Select

from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.notifiers import NotifiersPane
from tests.tui.helpers import screen_text, settle


async def test_the_notifiers_pane_opens_on_its_list_where_t_and_e_act(forms_backend, forms_key):
    # The footer said e Edit, D Delete, t Test send, but the provider drop-down had the keys:
    # t and e opened it, and the keys acted only after Tab four times (issue 45, M3).
    app = SpyglassApp(forms_backend.profile(forms_key), pane="notifiers")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        pane = app.query_one(NotifiersPane)
        assert app.focused is pane.list_table
        chosen = pane.selected()  # the list's first
        assert chosen is not None
        await pilot.press("t")
        await settle(pilot)
        assert not pane.query_one("#notifier-provider", Select).expanded
        assert f"test to {chosen.id} ({chosen.provider})" in screen_text(app), screen_text(app)
        await pilot.press("e")
        await settle(pilot)
        assert str(pane.save_button.label) != "Create"  # editing the notifier under the cursor
        assert pane.editing == chosen.id
