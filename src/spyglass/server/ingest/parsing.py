"""What an import's workers do with a block of a file: each line (or a scanner's piece) parsed
and prepared for the store, with what could not be, by its place (importer.py reads the file,
writers.py writes what this prepares)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from spyglass.exactjson import dumps, loads
from spyglass.server.banners.shape import BadBanner
from spyglass.server.banners.store import Prepared, Preparer
from spyglass.server.ingest import formats

OVERLONG = b"\xff\xfespyglass:"  # what stands for a dropped line in a block (never a JSON line)
SHORT_LINES = 32  # bytes a line: a block whose lines are shorter on average is mostly junk
_CONTENT = re.compile(rb"\S[^\n]*")  # a line's content, from its first character not white space
WHITE = b" \t\r\n\x0b\x0c"  # what bytes.strip() strips


@dataclass
class Chunk:
    """Lines of one file, parsed in a worker process: the prepared banners and the problems."""

    prepared: list[Prepared]
    lines: int  # blank ones too
    read: int
    problems: list[tuple[int, str]]  # (index of the line among the chunk's, why)
    places: list[tuple[str, str]] = field(default_factory=list)  # a scanner's unreadable records: (where, why)
    seen: list[dict] = field(default_factory=list)  # what a scanner saw of its hosts besides banners (Seen)

    def __getstate__(self) -> dict:
        """Pickled (to the process that writes them) as the prepared banners' fields, a list each:
        faster than a tuple each. A worker that writes them itself neither splits nor rebuilds them."""
        state = dict(self.__dict__)
        state["prepared"] = tuple(map(list, zip(*self.prepared, strict=True)))
        return state

    def __setstate__(self, state: dict) -> None:
        columns = state.pop("prepared")
        self.__dict__.update(state, prepared=list(map(Prepared, *columns)) if columns else [])


def json_problem(exc: ValueError) -> str:
    """What is wrong with a line, and where: a JSONDecodeError's ``msg`` alone drops the column."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno:,}"  # (a banner is one line: the column says where)
    return str(exc)


def prepare_lines(prepare: Preparer, lines: list[bytes]) -> Chunk:
    """Each line read exactly (integers past 64 bits too: a certificate serial is indexed as its
    digits, not as a float's) and prepared."""
    return _prepare_numbered(prepare, enumerate(lines), len(lines))


def _prepare_numbered(prepare: Preparer, numbered: Iterable[tuple[int, bytes]], lines: int) -> Chunk:
    """:func:`prepare_lines` of ``lines`` lines, of which ``numbered`` are those that may hold
    something, by their number among them (blank ones are skipped)."""
    prepared, problems, read = [], [], 0
    for number, line in numbered:
        body = line.strip()
        if not body:
            continue
        read += 1
        if body.startswith(OVERLONG):
            problems.append((number, body[len(OVERLONG) :].decode()))
            continue
        try:
            banner = loads(body)
        except ValueError as exc:
            problems.append((number, f"not JSON ({json_problem(exc)})"))
            continue
        try:
            prepared.append(prepare(banner, body))
        except BadBanner as exc:
            problems.append((number, str(exc)))
        except Exception as exc:  # a line stands alone, whatever it holds
            problems.append((number, f"unreadable banner ({type(exc).__name__})"))
    return Chunk(prepared, lines, read, problems)


def prepare_pieces(prepare: Preparer, work: tuple[formats.Pieces, list[tuple[object, bytes]]]) -> Chunk:
    """A scanner's pieces of a file parsed, and their banners prepared (a chunk's "lines" are its
    banners); what the format cannot read, by its place; what it saw of hosts besides banners."""
    fmt, pieces = work
    prepared, problems, places, seen, read, banners = [], [], [], [], 0, 0
    for context, data in pieces:
        try:
            records = list(fmt.parse(context, data))
        except Exception as exc:  # the format's own failure: the piece, not the import
            records = [formats.Unreadable("a piece of it", f"{fmt.name} failed ({type(exc).__name__}: {exc})")]
        for record in records:
            if isinstance(record, formats.Seen):  # not a banner, nor a record read: kept apart
                seen.append(record.record)
                continue
            read += 1
            if isinstance(record, formats.Unreadable):
                places.append((record.where, record.why))
                continue
            try:
                prepared.append(prepare(record, dumps(record)))
            except BadBanner as exc:
                problems.append((banners, str(exc)))
            except Exception as exc:
                problems.append((banners, f"unreadable banner ({type(exc).__name__})"))
            banners += 1
    return Chunk(prepared, banners, read, problems, places, seen)


def prepare_block(prepare: Preparer, block: bytes) -> Chunk:
    """:func:`prepare_lines` of a block of whole lines (one bytes object crosses to the worker,
    not thousands; the worker counts them, not the process that reads the file). A block of
    mostly blank or tiny lines (junk: 2 GiB of newlines gzip to 2 MB) is searched for the lines
    that hold something, rather than split into millions of empty ones."""
    count = block.count(b"\n") + (not block.endswith(b"\n"))
    if count <= len(block) // SHORT_LINES:
        lines = block.split(b"\n")
        if not lines[-1]:
            lines.pop()
        return prepare_lines(prepare, lines)
    if not block.translate(None, WHITE):  # nothing but white space: nothing to search for
        return Chunk([], count, 0, [])
    return _prepare_numbered(prepare, _holding(block), count)


def _holding(block: bytes) -> Iterator[tuple[int, bytes]]:
    """The lines of ``block`` that hold more than white space, each with its number."""
    number, at = 0, 0
    for found in _CONTENT.finditer(block):
        number += block.count(b"\n", at, found.start())
        at = found.start()
        yield number, found.group()
