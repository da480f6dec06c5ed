"""The data and organization panes driven like a person would, against the real backend."""

from __future__ import annotations

import hashlib

import pytest
from textual.widgets import Checkbox, Input

from spyglass.client.data import part_path
from spyglass.datagen import generate
from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.base import Pane
from spyglass.tui.panes.data import DataPane
from spyglass.tui.panes.org import OrgPane
from spyglass.tui.widgets.table import Table
from tests.conftest import backend_with
from tests.contract.test_data_api import settle as files_settled
from tests.tui.helpers import screen_text, settle

SIZE = (120, 40)


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("tui-data-org"), generate(400, seed=8)) as b:
        files_settled(b)
        yield b


async def open_data(pilot) -> DataPane:
    await settle(pilot)
    await pilot.press("f12")
    await settle(pilot)
    return pilot.app.query_one(DataPane)


async def test_datasets_files_and_a_download_with_resume(backend, tmp_path):
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_data(pilot)
        text = screen_text(app)
        assert "daily" in text and "monthly" in text and "daily: " in text
        sets = pane.query_one("#data-sets", Table)
        sets.focus()
        sets.move_cursor(row=1)
        await pilot.press("enter")
        await settle(pilot)
        assert pane.dataset == "monthly" and "monthly: " in screen_text(app)
        chosen = pane.files[0]
        whole = backend.app.state.datasets.path(backend.app.state.datasets.file("monthly", chosen.name)).read_bytes()
        part_path(tmp_path / chosen.name).write_bytes(whole[:100])  # an earlier download, interrupted
        pane.query_one("#data-dest", Input).value = str(tmp_path)
        pane.query_one("#data-files", Table).focus()
        await pilot.press("enter")
        await settle(pilot)
        got = (tmp_path / chosen.name).read_bytes()
        assert got == whole and hashlib.sha1(got).hexdigest() == chosen.sha1
        assert "SHA-1 checked" in screen_text(app)


async def test_a_file_failing_its_sha1_is_reported_and_removed(backend, tmp_path):
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_data(pilot)
        chosen = pane.files[0]
        part_path(tmp_path / chosen.name).write_bytes(b"x" * (chosen.size - 1))  # wrong bytes, one short
        pane.query_one("#data-dest", Input).value = str(tmp_path)
        pane.query_one("#data-files", Table).focus()
        await pilot.press("d")
        await settle(pilot)
        assert "SHA-1" in screen_text(app) and "start over" in screen_text(app)
        assert not (tmp_path / chosen.name).exists() and not part_path(tmp_path / chosen.name).exists()


async def test_a_plan_without_bulk_data_reads_as_a_message(backend):
    app = SpyglassApp(backend.profile(backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        await open_data(pilot)
        assert "requires an enterprise plan" in screen_text(app)


async def test_org_pane_without_an_organization_says_so_not_waiting(backend):
    """Issue 45: "waiting for the connection" stood under a status bar that said connected."""
    app = SpyglassApp(backend.profile(backend.key("member")))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await app.show_pane("org")
        await settle(pilot)
        text = screen_text(app)
        assert "connected" in text and "requires an enterprise plan" in text
        assert "waiting for the connection" not in text and "not loaded: the line above says why" in text


async def test_org_pane_adds_and_removes_members(backend):
    backend.store.create_account("lee-tui", "free", email="lee@acme.test")
    _, key = backend.store.create_account("boss-tui", "enterprise", email="boss@acme.test")
    app = SpyglassApp(backend.profile(key))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.show_pane("org")
        await settle(pilot)
        pane = app.query_one(OrgPane)
        assert "boss-tui" in screen_text(app) and "acme.test" in screen_text(app)
        field = pane.query_one("#org-user", Input)
        field.focus()
        await pilot.press("enter")  # nothing typed: said, not silently ignored
        await settle(pilot)
        assert "Type the username or e-mail address of a user to invite" in screen_text(app)
        field.value = "lee@acme.test"
        assert pane.query_one("#org-notify", Checkbox).value is False
        await pilot.press("enter")
        await settle(pilot)
        assert field.value == "" and [row[0] for row in pane.people] == ["boss-tui"]  # invited, not in yet
        lee = backend.store.find_account("lee-tui")
        ((org_id, _, _),) = backend.store.invitations(lee.id)
        assert backend.store.answer_invitation(org_id, lee.id, accept=True)
        await pane.load(app.clients)
        await settle(pilot)
        assert [row[0] for row in pane.people] == ["boss-tui", "lee-tui"]
        people = pane.query_one("#org-people", Table)
        people.focus()
        people.move_cursor(row=0)
        await pilot.press("delete")
        assert "only members can be removed" in screen_text(app)
        people.move_cursor(row=1)
        await pilot.press("delete")  # one press only asks, as D does for an alert
        await settle(pilot)
        assert [row[0] for row in pane.people] == ["boss-tui", "lee-tui"]
        assert "Press Delete again to remove lee-tui" in screen_text(app)
        await pilot.press("delete")
        await settle(pilot)
        assert [row[0] for row in pane.people] == ["boss-tui"]


async def test_pane_data_with_a_dataset_opens_its_files(backend):
    app = SpyglassApp(backend.profile(backend.key()), pane="data", arg="monthly")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one(DataPane)
        assert pane.dataset == "monthly" and pane.files[0].name.count("-") == 1  # YYYY-MM.json.gz
        assert "monthly: " in screen_text(app)


@pytest.mark.parametrize(
    ("pane_id", "arg", "table"),
    [("alerts", "192.0.2.0/24", "#alerts-list"), ("org", "newcomer", "#org-people")],
)
async def test_a_pane_argument_that_fills_a_form_loads_the_lists_too(forms_backend, forms_key, pane_id, arg, table):
    # `--pane alerts 192.0.2.0/24` filled the networks and loaded nothing: an empty alert list
    # (not even "No alert yet") although the account has one; without the argument it loaded.
    app = SpyglassApp(forms_backend.profile(forms_key), pane=pane_id, arg=arg)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one(f"#pane-{pane_id}", Pane)
        assert arg in [box.value for box in pane.query(Input)]
        assert pane.query_one(table, Table).row_count
        assert not pane.stale
