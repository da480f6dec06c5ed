"""Loading banner files: one JSON banner per line, or a scanner's output (nmap XML, ...), plain or
gzip, streamed, any size.

A file's format is known by its first bytes (:func:`spyglass.server.ingest.formats.known.format_of`), never its
name. A scanner's records are written as JSON banner lines and go the way every line goes (the same
workers, batches, dedup and problem report); one it cannot read is reported with its place in the
file (``scan.xml: host 3``) and the rest loads. What a scanner saw of its hosts besides open ports
(nmap: hosts up, ports closed or filtered) is kept apart from the banners, by this process, with
the file's name (banners/seen.py). Each line stands alone: a line that fails (not
JSON, no address, port or timestamp, anything else) is counted and reported with its line number
and the rest still loads. A file that cannot be read to its end (missing, a truncated or non-gzip
``.gz``) is an :class:`ImportFileError` in the report, with what was loaded before. Re-importing a
file adds nothing (banners are identified by address, port, transport, time and hash), so running
a killed import again completes it.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import IO, Any, cast

from spyglass.exactjson import dumps
from spyglass.server.banners.seen import Row, rows_of
from spyglass.server.banners.shape import BadBanner
from spyglass.server.banners.store import (
    BannerBatch,
    BannerStore,
    KnowsItsDisk,
    OpensElsewhere,
    Prepared,
    Preparer,
)
from spyglass.server.ingest import formats
from spyglass.server.ingest.parsing import OVERLONG, Chunk, prepare_block, prepare_pieces
from spyglass.server.ingest.sources import READ_ERRORS, name_of, opened, position, read_failure, size_of
from spyglass.server.ingest.writers import Written, _no_cycle_collection, import_by_writers, worker_start
from spyglass.server.memory import give_back_soon

BATCH = 20_000  # banners given to the store at a time
BLOCK = 4 << 20  # bytes of a file's lines parsed at a time, by a worker process
PIECES = 1 << 20  # bytes of a scanner's pieces parsed at a time (a port of 150 bytes of XML is a banner of 2 KB)
AHEAD = 6  # blocks a worker may parse ahead of the store (it goes on while a batch is stored)
READ = 64 << 10  # bytes inflated at a time: a truncated .gz loses at most this much of its last lines
# The longest line read, as collect's body limit: a longer one (1 MB of gzip can inflate to a 1 GiB
# line) is dropped as it is read, never held whole, and reported by its number.
MAX_LINE = 16 << 20
MAX_REPORTED = 50


class ImportFileError(Exception):
    """A file that could not be read to its end; ``loaded`` lines of it were read before."""

    def __init__(self, path: Path, message: str, loaded: int = 0) -> None:
        super().__init__(path, message)
        self.path, self.message, self.loaded = path, message, loaded

    def __str__(self) -> str:  # ``loaded`` is known once the lines read before are counted
        return f"{self.path}: {self.message} ({self.loaded:,} lines read before)"


JSON_LINES = "banner JSON lines"  # what a file no scanner's format claims is read as


@dataclass
class FileRead:
    """What one file of an import held: its format, records read, banners loaded, problems."""

    name: str
    format: str  # a tool's name ("nmap") or JSON_LINES
    read: int
    loaded: int  # new or already there
    bad: int
    failed: bool  # it could not be read to its end
    hosts: int = 0  # hosts the scanner reported (with what it saw of them besides open ports)
    added: int = 0  # of those loaded, the new ones


@dataclass
class ImportReport:
    read: int = 0  # non-blank lines (or a scanner's records) read
    added: int = 0
    duplicates: int = 0
    bad: int = 0
    problems: list[str] = field(default_factory=list)  # the first MAX_REPORTED bad lines, with where
    file_errors: list[ImportFileError] = field(default_factory=list)
    files: list[FileRead] = field(default_factory=list)  # one per file, in order
    hosts: int = 0  # hosts scanners reported (up or down, open ports or none: banners/seen.py)
    seen: int = 0  # rows of what they saw of them (a host, a port not open) new in the store

    def problem(self, where: str, why: str) -> None:
        self.bad += 1
        if len(self.problems) < MAX_REPORTED:
            self.problems.append(f"{where}: {why}")

    @property
    def loaded(self) -> int:
        """Banners now in the index from these files (new or already there)."""
        return self.added + self.duplicates

    @property
    def unit(self) -> str:
        """What a bad one is called: a line of banner files, a record of scanners'."""
        return "line" if all(f.format == JSON_LINES for f in self.files) else "record"

    @property
    def empty_scans(self) -> bool:
        """Every file is a scanner's, read to its end, with no record in it: a scan that found no
        open port (a result, not a failure)."""
        return bool(self.files) and all(f.format != JSON_LINES and not f.read and not f.failed for f in self.files)

    @property
    def exit_status(self) -> int:
        """0 all loaded (or scans with no open port); 1 some lines bad (every one, where what a
        scan saw of its hosts was kept); 2 a file unreadable, or nothing loaded (an empty file of
        banners too)."""
        if self.file_errors or not (self.loaded or self.empty_scans or self.hosts):
            return 2
        return 1 if self.bad else 0

    def merge(self, other: ImportReport) -> None:
        """Add ``other`` (the import of another file) to this one."""
        self.read += other.read
        self.added += other.added
        self.duplicates += other.duplicates
        self.bad += other.bad
        self.hosts += other.hosts
        self.seen += other.seen
        self.problems += other.problems[: MAX_REPORTED - len(self.problems)]
        self.file_errors += other.file_errors
        self.files += other.files


def _blocks_of(
    path: Path, source: tuple[IO[bytes], IO[bytes]], raw_progress: list[int], max_line: int = MAX_LINE
) -> Iterator[bytes]:
    """Blocks of about BLOCK bytes of whole lines, a line over ``max_line`` bytes replaced by a
    mark that says so; if the file fails part way, the whole lines read before it failed, then
    ImportFileError (whose ``loaded`` the caller counts)."""
    parts: list[bytes] = []
    size = 0
    partial = 0  # bytes of the last line so far (after the last newline in parts)
    dropping = False  # within a line over max_line: what is left of it is dropped as it is read
    failure: str | None = None
    lines, raw = source
    try:
        with raw, lines:
            while part := lines.read1(READ):  # type: ignore[attr-defined]
                if dropping:
                    end = part.find(b"\n")
                    if end < 0:
                        continue
                    part, dropping = part[end + 1 :], False
                last = part.rfind(b"\n")
                partial = partial + len(part) if last < 0 else len(part) - last - 1
                parts.append(part)
                size += len(part)
                if partial > max_line:  # the whole lines before it, then its mark
                    data = b"".join(parts)
                    data = data[: data.rfind(b"\n") + 1] + OVERLONG + f"a line over {max_line:,} bytes\n".encode()
                    parts, size, partial, dropping = [data], len(data), 0, True
                if size >= BLOCK and (last >= 0 or dropping):
                    data = b"".join(parts)
                    cut = data.rfind(b"\n") + 1
                    parts, size = [data[cut:]], len(data) - cut
                    raw_progress[0] = position(raw)
                    yield data[:cut]
            raw_progress[0] = position(raw)
    except READ_ERRORS as exc:
        failure = read_failure(exc)
    rest = b"".join(parts)
    if failure:  # the line being read when it failed is cut off: not a line of the file
        rest = rest[: rest.rfind(b"\n") + 1]
    if rest:
        yield rest
    if failure:
        raise ImportFileError(path, failure)


def _format_jobs(
    fmt: formats.ScanFormat,
    path: Path,
    source: tuple[IO[bytes], IO[bytes]],
    raw_progress: list[int],
    report: ImportReport,
) -> Iterator[tuple[Callable[[Preparer, Any], Chunk], object]]:
    """A scanner's file as the workers' jobs, as :func:`_blocks_of` makes a banner file's blocks:
    pieces they parse (a format that cuts its file so), else blocks of the JSON lines of its
    records, read here. An unreadable record met here is reported here, with its place."""
    cut = isinstance(fmt, formats.Pieces)
    batch: list = []
    size = 0
    failure: str | None = None

    def job() -> tuple[Callable[[Preparer, Any], Chunk], object]:
        return (prepare_pieces, (fmt, batch)) if cut else (prepare_block, b"\n".join(batch) + b"\n")

    stream, raw = source
    try:
        with raw, stream:
            items = cast(formats.Pieces, fmt).pieces if cut else fmt.records
            for item in items(stream):
                if isinstance(item, formats.Unreadable):
                    report.read += 1
                    report.problem(f"{name_of(path)}: {item.where}", item.why)
                    continue
                batch.append(item if cut else dumps(item))
                size += len(item[1]) if cut else len(batch[-1]) + 1
                if size >= (PIECES if cut else BLOCK):
                    raw_progress[0] = position(raw)
                    yield job()
                    batch, size = [], 0
            raw_progress[0] = position(raw)
    except READ_ERRORS as exc:
        failure = read_failure(exc)
    except Exception as exc:  # whatever a format's reading of a hostile file raises, it stops there
        failure = f"{fmt.name} output unreadable from here on ({type(exc).__name__}: {exc})"
    if batch:
        yield job()
    if failure:
        raise ImportFileError(path, failure)


def import_files(
    index: BannerStore,
    paths: list[Path],
    progress: Callable[[int, int, ImportReport], object] | None = None,
    workers: int | None = None,
    max_line: int = MAX_LINE,
) -> ImportReport:
    """Load ``paths`` into ``index``; ``progress(done_bytes, total_bytes, report)`` as blocks are
    stored. A line over ``max_line`` bytes is reported as bad, by its number.

    Parsing runs in ``workers`` processes (default: one per core it may run on). A store that another process
    can open (``opener()``) is written by those workers themselves, each with a writer of its own
    (writers.py), beside any other writer of the store; any other store is written here, as the
    workers parse. Either way what a file held is reported in file order. A file that fails is
    recorded in ``report.file_errors`` after what it yielded was loaded; the other files still load.
    """
    report = ImportReport()
    sizes = {p: size_of(p) or 0 for p in paths}
    total = sum(sizes.values())
    workers = workers if workers is not None else len(os.sched_getaffinity(0))  # the cores it may use (taskset)
    reopen = index.opener() if isinstance(index, OpensElsewhere) else None
    try:
        with _no_cycle_collection():
            if reopen is not None:
                storing = _Storing(None, report, progress, total, index.add_seen)
                jobs = partial(_jobs_of, report=report, max_line=max_line)
                import_by_writers(index, reopen, paths, sizes, storing, jobs, workers, AHEAD * workers)
            else:
                _import_here(index, paths, sizes, report, progress, total, workers, max_line)
    except Exception as exc:  # a full disk, said by the store in its own words
        if isinstance(index, KnowsItsDisk) and (full := index.full_disk(exc)) is not None:
            raise full from exc
        raise
    return report


def _jobs_of(path: Path, done: list[int], report: ImportReport, max_line: int) -> tuple[Any, Iterator]:
    """The workers' jobs for one file, and the scanner's format it is in (None: JSON lines)."""
    try:
        fmt, lines, raw = opened(path)
    except READ_ERRORS as exc:  # (a file that cannot be opened: its error as a read failure's)
        return None, _failed(path, exc)
    if fmt is None:
        return fmt, ((prepare_block, b) for b in _blocks_of(path, (lines, raw), done, max_line))
    return fmt, _format_jobs(fmt, path, (lines, raw), done, report)


def _failed(path: Path, exc: BaseException) -> Iterator[Any]:
    """No jobs: the file could not be opened, said as one that could not be read."""
    raise ImportFileError(path, read_failure(exc) or str(exc))
    yield


def _import_here(index: BannerStore, paths, sizes, report, progress, total: int, workers: int, max_line: int) -> None:
    """The workers parse and this process writes what they parsed (a store only this process can
    open)."""
    done_before = 0
    prepare = type(index).prepare
    with (
        index.writing() as writer,
        ProcessPoolExecutor(
            workers, mp_context=get_context("spawn"), initializer=worker_start, initargs=(os.getpid(),)
        ) as pool,
    ):
        storing = _Storing(writer, report, progress, total, index.add_seen)
        for path in paths:
            position = [0]
            pending: deque[tuple[Future, int]] = deque()
            fmt, jobs = _jobs_of(path, position, report, max_line)
            storing.start(name_of(path), fmt)
            failed = None
            try:
                for work, block in jobs:
                    pending.append((pool.submit(work, prepare, block), position[0]))
                    if len(pending) > AHEAD * workers:  # bounded: a huge file is never held in memory
                        storing.take(*pending.popleft(), done_before)
            except ImportFileError as exc:
                failed = exc
            while pending:
                storing.take(*pending.popleft(), done_before)
            storing.end(failed, done_before + sizes[path])
            done_before += sizes[path]


class _Storing:
    """Parsed chunks, in file order: counted in the report, and (when this process writes) given
    to the store BATCH banners at a time (a store writes a batch in one transaction: the bigger,
    the fewer times each page of its key index is written)."""

    def __init__(
        self,
        writer: BannerBatch | None,
        report: ImportReport,
        progress,
        total: int,
        add_seen: Callable[[list[Row]], int] | None = None,
    ) -> None:
        self.writer, self.report, self.progress, self.total = writer, report, progress, total
        self.held: list[Prepared] = []
        self.add_seen, self.seen = add_seen, cast(list[Row], [])  # what scanners saw, kept apart
        self.name, self.lines = "", 0  # the file's name, and its lines taken so far
        self.format: str = JSON_LINES
        self.before = ImportReport()  # the report's counts before this file

    def start(self, name: str, fmt: formats.ScanFormat | None = None) -> None:
        """Take the chunks of another file from here on (its problems are numbered from its first
        line, or a scanner's file's from its first banner)."""
        self.name, self.lines = name, 0
        self.format = fmt.name if fmt else JSON_LINES
        r = self.report
        self.before = ImportReport(r.read, r.added, r.duplicates, r.bad, hosts=r.hosts)

    def end(self, failed: ImportFileError | None, done: int) -> None:
        """The file's last chunk was taken: store what is held and say what the file read."""
        if failed:
            failed.loaded = self.lines
            self.report.file_errors.append(failed)
        self.flush(done)
        self.keep_seen()
        r, b = self.report, self.before
        read = FileRead(self.name, self.format, r.read - b.read, r.loaded - b.loaded, r.bad - b.bad, bool(failed))
        read.hosts, read.added = r.hosts - b.hosts, r.added - b.added
        r.files.append(read)

    def keep_seen(self) -> None:
        """Store what scanners saw of hosts (in this process: a few rows a host, beside the banners)."""
        if self.seen and self.add_seen is not None:
            self.report.seen += self.add_seen(self.seen)
        self.seen = []

    @staticmethod
    def file_error(exc: Exception) -> bool:
        """Whether ``exc`` ends a file, not the import (the file's report says it)."""
        return isinstance(exc, ImportFileError)

    def place(self, number: int) -> str:
        """Where the file's line (or a scanner's banner) ``number`` (from 1) is."""
        return f"{self.name}:{number}" if self.format == JSON_LINES else f"{self.name}: banner {number}"

    def _count(self, chunk: Chunk) -> None:
        self.report.read += chunk.read
        for number, why in chunk.problems:
            self.report.problem(self.place(self.lines + number + 1), why)
        for where, why in chunk.places:
            self.report.problem(f"{self.name}: {where}", why)
        self.lines += chunk.lines
        self.report.hosts += len(chunk.seen)
        for record in chunk.seen:
            self.seen += rows_of(record, self.name)
        if len(self.seen) >= BATCH:
            self.keep_seen()

    def take(self, future: Future, position: int, done_before: int) -> None:
        """A chunk parsed for this process to store."""
        chunk: Chunk = future.result()
        self._count(chunk)
        self.held += chunk.prepared
        if len(self.held) >= BATCH:
            self.flush(done_before + position)

    def written(self, written: Written, done: int) -> None:
        """A chunk a worker parsed and stored."""
        self._count(written.chunk)
        self.report.added += written.added
        self.report.duplicates += written.duplicates
        if self.progress:
            self.progress(done, self.total, self.report)

    def flush(self, done: int) -> None:
        if self.writer is not None:
            _flush(self.writer, self.held, self.report)
            self.held = []
            give_back_soon()  # what tantivy's merges freed meanwhile, which glibc would keep
        if self.progress:
            self.progress(done, self.total, self.report)


def import_banners(index: BannerStore, banners: Iterable[dict]) -> ImportReport:
    """Load banners already in memory (demo data, scan results), in this process; each is
    stored as given (never changed)."""
    report = ImportReport()
    with index.writing() as writer:
        batch: list[Prepared] = []
        for number, b in enumerate(banners, start=1):
            report.read += 1
            try:
                batch.append(index.prepare(b))
            except BadBanner as exc:
                report.problem(f"banner {number}", str(exc))
            except Exception as exc:
                report.problem(f"banner {number}", f"unreadable banner ({type(exc).__name__})")
            if len(batch) >= BATCH:
                _flush(writer, batch, report)
                batch = []
        _flush(writer, batch, report)
    return report


def _flush(writer, batch: list[Prepared], report: ImportReport) -> None:
    if batch:
        added = len(writer.add(batch))
        report.added += added
        report.duplicates += len(batch) - added
