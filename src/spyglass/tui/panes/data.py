"""The bulk data pane: datasets, their files, and downloads with a progress bar, SHA-1 check and
resume (an interrupted download leaves NAME.part, which the next download of it continues)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from rich.cells import cell_len
from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Button, DataTable, Input, ProgressBar, Static

from spyglass.present.data import dataset_row, file_row, progress_text, size_text
from spyglass.safetext import clean, safe_text
from spyglass.tui.panes.base import Pane, PaneFailure
from spyglass.tui.widgets.table import Column, Table

if TYPE_CHECKING:
    from spyglass.client import Clients
    from spyglass.models import Dataset, DatasetFile

DATASET_COLUMNS = [
    Column("name", "Dataset", 10),
    Column("scope", "Scope", 8, rank=2),
    Column("description", "Description", 30, rank=1, flex=True),
]
# The backend lists a day or a month once it has ended: said where today's file would be looked for.
WHOLE = {"daily": " · whole days: today's after midnight UTC", "monthly": " · whole months: this month's after it ends"}
FILE_COLUMNS = [
    Column("name", "File", 18),
    Column("size", "Size", 10, rank=1),
    Column("built", "Built (UTC)", 16, rank=2),
    Column("sha1", "SHA-1", 40, rank=3, flex=True),
]


class DataPane(Pane):
    ID = "data"
    TITLE = "Data"
    LOADS_WITH_ARG = True
    FOLLOWS_ELSEWHERE = True  # an import adds a day's file: listed when shown again (free listings)
    KEYS = "f12"
    SECTION = "data"
    HOME = "#data-files"
    HELP = (
        "Bulk data (enterprise): the datasets and their files. Enter on a dataset lists its files; "
        "Enter (or d) on a file downloads it into the folder above (asked for when it is empty), with a "
        "progress bar and a SHA-1 check. x stops a download; downloading the file again resumes it."
    )
    BINDINGS = [
        Binding("d", "download", "Download", id="data.download"),
        Binding("x", "stop", "Stop download", id="data.stop"),
    ]
    DEFAULT_CSS = """
    DataPane #data-sets { height: auto; max-height: 6; border: round $primary 50%; }
    DataPane #data-files { height: 1fr; min-height: 6; border: round $primary 50%; }
    DataPane #data-form { height: 1; }
    DataPane #data-form Input { width: 1fr; }
    DataPane #data-form Button { min-width: 12; }
    DataPane #data-progress { height: 1; }
    DataPane #data-bar { width: auto; margin-right: 1; display: none; }
    DataPane #data-bar Bar { width: 16; }
    DataPane #data-bar.shown { display: block; }
    DataPane #data-status { width: 1fr; color: $text-muted; }
    """

    # the widgets it drives
    files_table = getters.query_one("#data-files", Table)
    sets_table = getters.query_one("#data-sets", Table)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.datasets: list[Dataset] = []
        self.files: list[DatasetFile] = []
        self.dataset = ""  # whose files are listed

    def compose(self) -> ComposeResult:
        yield self.compose_error()
        sets = Table(DATASET_COLUMNS, id="data-sets")
        sets.border_title = "Datasets"
        yield sets
        with Horizontal(id="data-form"):
            yield Input(
                placeholder="download folder (asked at the first download)",
                id="data-dest",
                compact=True,
                select_on_focus=False,
            )
            yield Button("Download", id="data-get", compact=True, variant="primary")
        with Horizontal(id="data-progress"):
            yield ProgressBar(id="data-bar", show_eta=False)
            yield Static("Pick a file and press Enter to download it.", id="data-status")
        files = Table(FILE_COLUMNS, id="data-files")
        files.border_title = "Files"
        yield files

    def focus_first(self) -> None:
        self.sets_table.focus()

    async def load(self, clients: Clients) -> None:
        self.datasets = await clients.data.datasets()
        table = self.sets_table
        table.clear_records()
        for i, d in enumerate(self.datasets):
            name, scope, description = dataset_row(d)
            table.add_record({"name": name, "scope": scope, "description": description}, key=str(i))
        if self.datasets:
            chosen = next((d.name for d in self.datasets if d.name == self.dataset), self.datasets[0].name)
            await self.list_files(clients, chosen)

    async def list_files(self, clients: Clients, dataset: str) -> None:
        table = self.files_table
        asked_at = table.cursor_row
        files = await clients.data.files(dataset)
        # Keys pressed while the list was on its way (a slow link) move in the list that arrives:
        # the same dataset keeps the cursor on the file it is on, another starts moved as far.
        same, row = dataset == self.dataset, table.cursor_row
        on = self.file_at(row) if same else None
        index = next((i for i, f in enumerate(files) if on and f.name == on.name), None)
        if not same:
            row = max(0, row - asked_at)
        self.files, self.dataset = files, dataset
        table.border_title = safe_text(f"{dataset}: {len(files):,} files{WHOLE.get(dataset, '')}", one_line=True)
        table.clear_records()
        for i, f in enumerate(files):
            name, size, built, sha1 = file_row(f)
            table.add_record({"name": name, "size": size, "built": built, "sha1": sha1}, key=str(i))
        if files:
            row = table.get_row_index(str(index)) if index is not None else row
            table.move_cursor(row=min(row, len(files) - 1), animate=False)

    def file_at(self, row: int) -> DatasetFile | None:
        index = int(self.files_table.key_at(row) or -1)
        return self.files[index] if 0 <= index < len(self.files) else None

    def run_arg(self, arg: str) -> None:
        """``--pane data DATASET``: list that dataset's files."""
        self.dataset = clean(arg, one_line=True, max_chars=64)  # what the first load lists, too
        clients = self.clients
        if clients is not None and not self.stale:  # (a stale pane's load lists them)
            self.call("files", self.list_files, clients, self.dataset)

    @on(DataTable.RowSelected, "#data-sets")
    def open_dataset(self, event: DataTable.RowSelected) -> None:
        index = int(event.row_key.value or -1)
        clients = self.clients
        if clients is not None and 0 <= index < len(self.datasets):
            self.call("files", self.list_files, clients, self.datasets[index].name)
            self.files_table.focus()

    @on(DataTable.RowSelected, "#data-files")
    def download_selected(self, event: DataTable.RowSelected) -> None:
        self.start_download(int(event.row_key.value or -1))

    @on(Button.Pressed, "#data-get")
    @on(Input.Submitted, "#data-dest")
    def action_download(self) -> None:
        table = self.files_table
        self.start_download(int(table.key_at(table.cursor_row) or -1))

    def start_download(self, index: int) -> None:
        clients = self.clients
        if clients is None or not 0 <= index < len(self.files):
            self.show_error("Pick a file first: Enter on a dataset lists its files.")
            return
        box = self.query_one("#data-dest", Input)
        if not box.value.strip():  # never a surprise file in the current directory: ask where
            box.value = str(Path.cwd())
            self.focus_box("#data-dest")
            self.status("Where to? Enter downloads into the folder above (edit it first if need be).")
            return
        folder = Path(box.value.strip()).expanduser()
        self.show_error(None)
        self.call("download", self.download, clients, self.dataset, self.files[index], folder)

    def action_stop(self) -> None:
        if any(w.is_running for w in self.workers if w.group == "download"):
            self.workers.cancel_group(self, "download")
            self.status("Stopped: download the file again to resume where it stopped.")

    def status(self, text: str) -> None:
        self.query_one("#data-status", Static).update(safe_text(text, one_line=True, max_chars=300))

    async def download(self, clients: Clients, dataset: str, file: DatasetFile, folder: Path) -> None:
        """Download ``file`` as ``dataset`` lists it now (the list shown may be older: a file is
        rebuilt when banners of its day are collected late) into ``folder``."""
        from spyglass.client import SpyglassError
        from spyglass.client.data import ChecksumMismatch, download_current, part_path

        if not await asyncio.to_thread(folder.is_dir):
            # Worded as the CLI does; resuming could not help. Said on the status line too, in
            # place of the last download's outcome, which would seem to be this one's.
            said = f"no such folder: {clean(folder, one_line=True)}"
            self.status(said)
            raise PaneFailure(said)
        name = Path(file.name).name or "download"  # the server's name, kept inside the folder
        dest = folder / name
        bar = self.query_one("#data-bar", ProgressBar)
        bar.update(total=file.size or None, progress=0)
        bar.add_class("shown")
        label = clean(name, one_line=True)

        def show(done: int, total: int | None) -> None:
            bar.update(total=total, progress=done)
            self.status(f"{label}: {progress_text(done, total)}")

        part = part_path(dest)
        held = await asyncio.to_thread(lambda: part.stat().st_size if part.exists() else 0)
        if held:
            self.status(f"{label}: resuming at {size_text(held)}")
        try:
            got = await download_current(clients.data, dataset, file.name, dest, progress=show)
        except ChecksumMismatch as exc:
            self.status(f"{label}: failed its SHA-1 check")
            raise PaneFailure(f"{exc} — download it again to start over") from exc
        except (SpyglassError, OSError) as exc:
            self.status(f"{label}: stopped")
            # Worded here rather than by the app: it says how to resume.
            raise PaneFailure(f"download of {label} stopped: {exc} — download it again to resume") from exc
        bar.remove_class("shown")  # the row is the path's
        checked = "SHA-1 checked" if got.sha1 else "no SHA-1 given to check"
        said = f"{checked}, {size_text(got.size)}, saved as "  # most telling first: lines are cut
        room = self.query_one("#data-progress").size.width - cell_len(said)
        self.status(said + cut_middle(clean(dest, one_line=True), max(room, 16)))
        self.app.notify(f"Downloaded {label} ({checked})", markup=False)
        if got != file and self.dataset == dataset:
            await self.list_files(clients, dataset)  # the list showed an older build of it


def cut_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells, its middle left out for a "…": both ends of a path
    tell (where it is, and the file's name)."""
    if cell_len(text) <= width:
        return text
    head, tail = text[: (width - 1) // 2], text[len(text) - (width - 1 - (width - 1) // 2) :]
    while cell_len(head) + cell_len(tail) > width - 1:  # wide characters
        head, tail = (head[:-1], tail) if cell_len(head) > cell_len(tail) else (head, tail[1:])
    return f"{head}…{tail}"
