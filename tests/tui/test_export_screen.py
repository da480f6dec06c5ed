"""Exporting a query's results from the dashboard: the CLI's file types and words."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from spyglass.datagen import generate
from spyglass.tui.app import SpyglassApp
from spyglass.tui.screens.export import ExportScreen
from tests.conftest import backend_with
from tests.tui.helpers import screen_text, settle

SIZE = (120, 36)


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("tui-export"), list(generate(300, seed=5))) as backend:
        yield backend


async def export_as(pilot, path: str) -> None:
    app = pilot.app
    query = app.query_one("#query", Input)
    query.focus()
    query.value = "port:22"
    await pilot.press("enter")
    await settle(pilot)
    app.screen.query_one("#results").focus()
    await pilot.press("e")
    await settle(pilot)
    assert isinstance(app.screen, ExportScreen)
    app.screen.query_one("#export-path", Input).value = path
    await pilot.press("enter")
    await settle(pilot)


async def test_a_json_file_is_exported_as_the_cli_exports_it(backend, tmp_path):
    app = SpyglassApp(backend.profile(backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await export_as(pilot, str(tmp_path / "out.json"))
        assert not isinstance(app.screen, ExportScreen)
        await settle(pilot)
        lines = (tmp_path / "out.json").read_bytes().splitlines()
        assert lines and all(line.startswith(b"{") for line in lines)  # plain JSON lines, as the CLI writes


async def test_a_file_type_export_cannot_write_is_said_in_the_cli_words(backend, tmp_path):
    app = SpyglassApp(backend.profile(backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await export_as(pilot, str(tmp_path / "out.txt"))
        assert isinstance(app.screen, ExportScreen)  # still open, the path kept
        assert app.screen.query_one("#export-path", Input).value == str(tmp_path / "out.txt")
        assert "out.txt must end in .json.gz, .json or .csv" in screen_text(app)


async def test_a_finished_file_is_replaced_only_on_a_second_enter(backend, tmp_path):
    earlier = tmp_path / "out.json"
    earlier.write_text('{"kept": true}\n')
    app = SpyglassApp(backend.profile(backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await export_as(pilot, str(earlier))
        assert isinstance(app.screen, ExportScreen)  # asked first
        assert "out.json exists: Enter again to replace it" in screen_text(app)
        assert earlier.read_text() == '{"kept": true}\n'
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, ExportScreen)
        await settle(pilot)
        assert earlier.read_text() != '{"kept": true}\n'
