"""The search pane's save dialog (ctrl+s) against the real backend: what it refuses, it says in
the dialog, keeping what was typed, with the cursor on the field to fix."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Static

from spyglass.datagen import generate
from spyglass.tui.app import SpyglassApp
from spyglass.tui.screens.savequery import SaveQueryScreen
from tests.conftest import backend_with
from tests.tui.helpers import settle


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("tui-dirsave"), generate(50, seed=3)) as backend:
        yield backend


async def open_dialog(pilot, query: str) -> SaveQueryScreen:
    await settle(pilot)
    pilot.app.query_one("#query", Input).value = query
    await pilot.press("ctrl+s")
    await settle(pilot)
    assert isinstance(pilot.app.screen, SaveQueryScreen)
    return pilot.app.screen


def said(dialog: SaveQueryScreen) -> str:
    return str(dialog.query_one("#save-error", Static).render())


async def test_tags_the_server_refuses_are_said_in_the_dialog_which_keeps_what_was_typed(served):
    app = SpyglassApp(served.profile(served.key("member")))
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(pilot, "port:443")
        typed = {"title": "TLS hosts", "tags": "bad tag!!,ics", "description": "every 443"}
        for name, value in typed.items():
            dialog.query_one(f"#save-{name}", Input).value = value
        dialog.query_one("#save-description", Input).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is dialog
        assert said(dialog).startswith("Tags: tag 'bad tag!!': 1-32 letters")  # the server's rule, before asking
        assert {name: dialog.query_one(f"#save-{name}", Input).value for name in typed} == typed
        assert app.focused is dialog.query_one("#save-tags", Input)
        # fixed, it saves and closes
        dialog.query_one("#save-tags", Input).value = "tls,ics"
        dialog.query_one("#save-description", Input).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is not dialog
        found = await app.clients.directory.search("TLS hosts")
        assert [(q.query, q.tags) for q in found.matches] == [("port:443", ["tls", "ics"])]


async def test_a_missing_title_puts_the_cursor_on_the_title(served):
    app = SpyglassApp(served.profile(served.key("member")))
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(pilot, "port:22")
        dialog.query_one("#save-tags", Input).value = "ssh"
        dialog.query_one("#save-description", Input).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is dialog and said(dialog) == "A title is needed."
        assert app.focused is dialog.query_one("#save-title", Input)
        assert dialog.query_one("#save-tags", Input).value == "ssh"


async def test_enter_on_an_empty_title_stays_there_and_says_so(served):
    """As typed from the top: Enter on the empty title moved on to the tags, saying nothing."""
    app = SpyglassApp(served.profile(served.key("member")))
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(pilot, "port:22")
        title = dialog.query_one("#save-title", Input)
        assert app.focused is title
        await pilot.press("space", "enter")  # a blank title is none
        await settle(pilot)
        assert app.focused is title and said(dialog) == "A title is needed." and title.value == " "
        await pilot.press(*"SSH", "enter")
        await settle(pilot)
        assert app.focused is dialog.query_one("#save-tags", Input) and said(dialog) == ""


async def test_what_the_server_refuses_is_said_in_the_dialog(served):
    app = SpyglassApp(served.profile(served.key("member")))
    async with app.run_test(size=(80, 24)) as pilot:
        words = " ".join(letter * 250 for letter in "abcd")  # each within the query language's caps
        dialog = await open_dialog(pilot, "port:22 " + words)  # parses, but longer than the server keeps
        dialog.query_one("#save-title", Input).value = "Too long"
        dialog.query_one("#save-description", Input).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is dialog
        assert said(dialog).startswith("Not saved: Invalid request: query: 1 to 1000 characters")
        assert dialog.query_one("#save-title", Input).value == "Too long"


async def test_a_query_refused_by_ctrl_s_is_said_until_it_is_fixed(served):
    """Trial 27: "Fix the query first" stayed above a query fixed since."""
    from tests.tui.helpers import screen_text

    app = SpyglassApp(served.profile(served.key("member")))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        box = app.query_one("#query", Input)
        box.value = "port:abc"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not isinstance(app.screen, SaveQueryScreen)
        assert "Fix the query first: port: 'abc' is not a whole number" in screen_text(app)
        box.value = "port:502 country:DE"
        await settle(pilot)
        assert "Fix the query first" not in screen_text(app)
