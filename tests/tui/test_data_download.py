"""The data pane downloads a file as it is listed now, refuses a folder that is not there, and
shows where it saved the file, against the real backend."""

from __future__ import annotations

import asyncio
import hashlib

import pytest
from textual.widgets import Input, Static

from spyglass.client.data import DataClient, part_path
from spyglass.datagen import generate
from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.data import DataPane, cut_middle
from spyglass.tui.widgets.table import Table
from tests.conftest import backend_with
from tests.contract.test_data_api import settle as files_settled
from tests.tui.helpers import screen_text, settle


@pytest.fixture
def backend(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("tui-data-download"), generate(300, seed=5)) as b:
        files_settled(b)
        yield b


async def open_monthly(pilot) -> DataPane:
    await settle(pilot)
    await pilot.press("f12")
    await settle(pilot)
    pane = pilot.app.query_one(DataPane)
    sets = pane.query_one("#data-sets", Table)
    sets.focus()
    sets.move_cursor(row=1)
    await pilot.press("enter")
    await settle(pilot)
    assert pane.dataset == "monthly"
    return pane


def status(pane: DataPane) -> str:
    return str(pane.query_one("#data-status", Static).render())


async def test_a_file_rebuilt_since_it_was_listed_downloads_as_it_is_now(backend, tmp_path):
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_monthly(pilot)
        shown = pane.files[0]  # the newest month, as the pane listed it
        banner = dict(next(iter(generate(1, seed=99))))
        banner |= {"ip_str": "198.18.250.1", "timestamp": shown.name[:7] + "-15T12:00:00.000000"}
        banner.pop("ip", None)
        assert backend.collect([banner])  # the backend rebuilds that month's file
        files_settled(backend)
        now = backend.app.state.datasets.file("monthly", shown.name)
        assert now.sha1 != shown.sha1
        pane.query_one("#data-dest", Input).value = str(tmp_path)
        pane.query_one("#data-files", Table).focus()
        await pilot.press("enter")
        await settle(pilot)
        got = (tmp_path / shown.name).read_bytes()
        assert hashlib.sha1(got).hexdigest() == now.sha1
        assert "SHA-1 checked" in status(pane) and "is not the listed" not in screen_text(app)
        assert pane.files[0].sha1 == now.sha1  # the list shows the file as downloaded


async def test_a_down_pressed_while_files_are_listed_moves_in_the_list_that_arrives(backend, monkeypatch):
    """On a slow link the list comes after the keys: a Down typed after Enter on a dataset is a
    move in the list that arrives (it put the cursor back on row 0, issue 45 minor 14)."""
    gate = asyncio.Event()
    gate.set()
    listed = DataClient.files

    async def slow(self, dataset: str):
        await gate.wait()
        return await listed(self, dataset)

    monkeypatch.setattr(DataClient, "files", slow)
    app = SpyglassApp(backend.profile(backend.key()), pane="data")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        pane = app.query_one(DataPane)
        sets, files = pane.query_one("#data-sets", Table), pane.query_one("#data-files", Table)
        for row, dataset in ((0, "daily"), (1, "monthly")):  # the one listed, then another
            sets.focus()
            sets.move_cursor(row=row)
            await settle(pilot)
            gate.clear()
            await pilot.press("enter", "down")
            gate.set()
            await settle(pilot)
            assert pane.dataset == dataset and app.focused is files
            assert files.cursor_row == 1 and files.key_at(1) == "1", dataset  # the second file


async def test_a_folder_that_is_not_there_is_said_before_downloading(backend, tmp_path):
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_monthly(pilot)
        missing = tmp_path / "nope" / "dir"
        pane.query_one("#data-dest", Input).value = str(missing)
        pane.query_one("#data-files", Table).focus()
        await pilot.press("enter")
        await settle(pilot)
        said = str(pane.query_one(".pane-error", Static).render())
        assert said == f"no such folder: {missing}" and "no such folder:" in screen_text(app)
        assert not missing.exists() and pane.query_one("#data-dest", Input).value == str(missing)


async def test_the_saved_path_shows_at_80_columns(backend, tmp_path):
    folder = tmp_path / ("a-rather-long-folder-name-" * 3) / "downloads"
    folder.mkdir(parents=True)
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_monthly(pilot)
        name = pane.files[0].name
        pane.query_one("#data-dest", Input).value = str(folder)
        pane.query_one("#data-files", Table).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert (folder / name).exists() and not part_path(folder / name).exists()
        line = next(line for line in screen_text(app).splitlines() if "saved as" in line)
        assert line.rstrip().endswith(f"loads/{name}") and f"saved as {str(tmp_path)[:8]}" in line and "…" in line


async def test_with_no_folder_a_download_asks_where_first(backend, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_monthly(pilot)
        name = pane.files[0].name
        pane.query_one("#data-files", Table).focus()
        await pilot.press("d")  # a d typed by mistake saves nothing
        await settle(pilot)
        box = pane.query_one("#data-dest", Input)
        assert not (tmp_path / name).exists() and "Where to?" in status(pane)
        assert app.focused is box and box.value == str(tmp_path)
        await pilot.press("enter")  # the folder offered, accepted
        await settle(pilot)
        assert (tmp_path / name).exists()


def test_cut_middle_keeps_both_ends_within_the_width():
    assert cut_middle("/short", 20) == "/short"
    cut = cut_middle("/home/user/a/very/long/folder/file.json.gz", 20)
    assert len(cut) == 20 and cut.startswith("/home/u") and cut.endswith("file.json.gz"[-9:]) and "…" in cut
    assert cut_middle("/目录/目录/目录/目录/file", 11).count("…") == 1


async def test_a_missing_folder_after_a_download_is_said_in_place_of_its_success(backend, tmp_path):
    # After a download, a folder that is not there typed in the box and Enter: nothing said,
    # and "saved as" of the last one stayed, as if this one had gone there (issue 45, M6).
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_monthly(pilot)
        box = pane.query_one("#data-dest", Input)
        box.value = str(tmp_path)
        pane.query_one("#data-files", Table).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert "saved as" in status(pane)
        missing = tmp_path / "x" / "nope"
        box.focus()
        await pilot.press("ctrl+u", *str(missing), "enter")
        await settle(pilot)
        assert status(pane) == f"no such folder: {missing}"
        assert "saved as" not in screen_text(app) and box.value == str(missing)
        assert str(pane.query_one(".pane-error", Static).render()) == f"no such folder: {missing}"


async def test_a_day_imported_since_is_listed_when_the_pane_is_shown_again(backend):
    """Trial 27: the daily list stayed at 730 files after an import added a day, until r."""
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f12")
        await settle(pilot)
        pane = app.query_one(DataPane)
        assert pane.dataset == "daily"
        listed = {f.name for f in pane.files}
        banner = dict(next(iter(generate(1, seed=98))))
        banner |= {"ip_str": "198.18.250.2", "timestamp": "2026-11-29T12:00:00.000000"}
        banner.pop("ip", None)
        assert backend.collect([banner])
        files_settled(backend)
        assert "2026-11-29.json.gz" not in listed
        await pilot.press("f2", "f12")
        await settle(pilot)
        assert pane.dataset == "daily" and "2026-11-29.json.gz" in {f.name for f in pane.files}
