"""Opening a file to import: plain or gzip, a regular file or a pipe (``-``, ``<(zcat f.gz)``), read
once from its start; its scanner's format known by its first bytes; what reading it can fail with.

A pipe cannot be opened twice or sought, so a file is opened once: its head is read to know its
format, then given again before the rest (:class:`_HeadFirst`).
"""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path
from typing import IO, cast

from isal import igzip, isal_zlib

from spyglass.server.ingest import formats
from spyglass.server.ingest.formats.known import format_of

STDIN = Path("-")  # what a user gives to import standard input
CORRUPT = cast(type[Exception], isal_zlib.error)  # ISA-L's inflate error (its stub calls it an instance)

# What reading a file can fail with, and how the report says it
_READ_FAILURES: tuple[tuple[type[BaseException], str | None], ...] = (
    (gzip.BadGzipFile, "it is not a gzip file"),
    (EOFError, "it ends early (a truncated gzip file?)"),
    (CORRUPT, "its compressed data is corrupt"),
    (OSError, None),  # its own words
)
READ_ERRORS = tuple(kind for kind, _ in _READ_FAILURES)


def read_failure(exc: BaseException) -> str | None:
    """Why a file could not be read to its end, if ``exc`` is a read failure (None otherwise)."""
    for kind, why in _READ_FAILURES:
        if isinstance(exc, kind):
            return why or (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc))
    return None


def readable(path: Path) -> bool:
    """Whether ``path`` is something import reads: standard input, a regular file, or a pipe or
    device (``<(zcat f.gz)``, ``/dev/stdin``); not a directory, not missing."""
    return path == STDIN or (path.exists() and not path.is_dir())


def name_of(path: Path) -> str:
    """How the report names a file: its name, the path of a pipe (/dev/fd/63), or "stdin"."""
    if path == STDIN:
        return "stdin"
    return path.name if path.is_file() else str(path)


def size_of(path: Path) -> int | None:
    """Bytes of a regular file; None for a pipe or standard input, whose end is not known."""
    return path.stat().st_size if path != STDIN and path.is_file() else None


def open_banner_file(path: Path) -> tuple[io.BufferedIOBase, IO[bytes]]:
    """(lines to read, raw file whose position measures progress); gzip by suffix or content."""
    raw = cast(io.BufferedReader, sys.stdin.buffer if path == STDIN else open(path, "rb"))
    gz = raw.peek(2)[:2] == b"\x1f\x8b" or path.suffix == ".gz"
    # ISA-L inflates gzip several times as fast as zlib: this
    # process reads the whole file while it also stores and indexes.
    return igzip.GzipFile(fileobj=raw) if gz else raw, raw


def position(raw: IO[bytes]) -> int:
    """Bytes of ``raw`` read so far, for progress: 0 for a pipe (its size is not known either)."""
    return raw.tell() if raw.seekable() else 0


def opened(path: Path) -> tuple[formats.ScanFormat | None, io.BufferedReader, IO[bytes]]:
    """``path`` opened once: the scanner's format of its first bytes (None: JSON lines), its
    un-gzipped lines from their start, and the raw file (see :func:`open_banner_file`). A head cut
    short by a read failure (a truncated gzip file) is still sniffed; the failure is raised when
    the lines are read past it."""
    lines, raw = open_banner_file(path)
    head, failure = b"", None
    try:
        while len(head) < formats.HEAD and (part := lines.read1(formats.HEAD - len(head))):
            head += part
    except READ_ERRORS as exc:
        failure = exc
    return format_of(head), io.BufferedReader(_HeadFirst(head, lines, failure), 1 << 16), raw


def sniff_file(path: Path) -> formats.ScanFormat | None:
    """The scanner's format of the file at ``path`` by its first bytes (un-gzipped), or None (JSON
    lines, or a file that cannot be read: the JSON lines path reports why)."""
    fmt, lines, raw = opened(path)
    with raw, lines:
        return fmt


class _HeadFirst(io.RawIOBase):
    """The bytes already read from ``rest`` (``head``), then the rest of it; ``failure``, what
    stopped the head's reading, raised once the head is given."""

    def __init__(self, head: bytes, rest: io.BufferedIOBase, failure: BaseException | None) -> None:
        self._head = memoryview(head)
        self._rest = rest
        self._failure = failure

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        if self._failure is not None:
            raise self._failure
        data = self._rest.read1(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._rest.close()
        super().close()
