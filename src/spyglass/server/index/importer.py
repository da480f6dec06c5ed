"""Loading banner files: one JSON banner per line, plain or gzip, streamed, any size.

A bad line is counted and reported with its line number; the rest still loads. Re-importing a
file adds nothing (banners are identified by address, port, transport, time and hash).
"""

from __future__ import annotations

import gzip
import ipaddress
import os
import socket
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import orjson

from spyglass.server.index.banners import BannerIndex, prepare

BATCH = 5000
MAX_REPORTED = 50


@dataclass
class ImportReport:
    read: int = 0
    added: int = 0
    duplicates: int = 0
    bad: int = 0
    problems: list[str] = field(default_factory=list)  # the first MAX_REPORTED bad lines, with where

    def problem(self, where: str, why: str) -> None:
        self.bad += 1
        if len(self.problems) < MAX_REPORTED:
            self.problems.append(f"{where}: {why}")


class BadBanner(ValueError):
    pass


def normalize(b: object) -> dict:
    """A banner as stored: the crawler member under ``_intel``, ``ip_str`` and ``ip`` both set."""
    if not isinstance(b, dict):
        raise BadBanner("not a JSON object")
    if "_intel" not in b:
        for name, value in list(b.items()):  # another namespace's member, e.g. the original's
            if name.startswith("_") and name != "_id" and isinstance(value, dict) and (
                    "crawler" in value or "module" in value):
                b["_intel"] = b.pop(name)
                break
    ip_str = b.get("ip_str")
    try:  # inet_aton is ~10x faster than ipaddress for the common IPv4 case
        if not isinstance(ip_str, str) or ip_str.count(".") != 3:
            raise OSError
        packed = socket.inet_aton(ip_str)
        if socket.inet_ntoa(packed) != ip_str:
            raise OSError  # not in canonical dotted form: let ipaddress judge it
        b.setdefault("ip", int.from_bytes(packed, "big"))
    except OSError:
        try:
            address = ipaddress.ip_address(ip_str if ip_str else b.get("ip"))
        except ValueError:
            raise BadBanner("no valid ip_str or ip") from None
        b["ip_str"] = str(address)
        b.setdefault("ip", int(address))
    if not isinstance(b.get("port"), int) or not 0 <= b["port"] <= 65535:
        raise BadBanner("no valid port")
    stamp = b.get("timestamp")
    if not isinstance(stamp, str) or len(stamp) < 19 or stamp[4] != "-" or stamp[10] != "T":
        raise BadBanner("no ISO 8601 timestamp")
    b.setdefault("transport", "tcp")
    return b


def open_banner_file(path: Path) -> tuple[IO[bytes], IO[bytes]]:
    """(lines to read, raw file whose position measures progress)."""
    raw = open(path, "rb")
    magic = raw.read(2)
    raw.seek(0)
    return (gzip.GzipFile(fileobj=raw) if magic == b"\x1f\x8b" else raw), raw


@dataclass
class Chunk:
    """Lines of one file, parsed in a worker process: the prepared banners and the problems."""

    prepared: list[tuple[int, bytes, bytes]]
    read: int
    problems: list[tuple[str, str]]


def prepare_lines(lines: list[bytes], name: str, first: int) -> Chunk:
    prepared, problems, read = [], [], 0
    for number, line in enumerate(lines, start=first):
        if not line.strip():
            continue
        read += 1
        try:
            banner = orjson.loads(line)
            as_read = isinstance(banner, dict) and "_intel" in banner and "ip" in banner and "transport" in banner
            ip_str = banner.get("ip_str") if as_read else None
            banner = normalize(banner)
            # Unchanged by normalize: store the line itself rather than serialize it again.
            same = as_read and banner["ip_str"] == ip_str
            prepared.append(prepare(banner, line.rstrip(b"\r\n") if same else None))
        except orjson.JSONDecodeError as exc:
            problems.append((f"{name}:{number}", f"not JSON ({exc.msg})"))
        except BadBanner as exc:
            problems.append((f"{name}:{number}", str(exc)))
    return Chunk(prepared, read, problems)


def _chunks_of(path: Path, raw_progress: list[int]) -> Iterator[tuple[list[bytes], int]]:
    lines, raw = open_banner_file(path)
    with raw, lines:
        batch: list[bytes] = []
        first = 1
        for number, line in enumerate(lines, start=1):
            batch.append(line)
            if len(batch) >= BATCH:
                raw_progress[0] = raw.tell()
                yield batch, first
                batch, first = [], number + 1
        if batch:
            raw_progress[0] = raw.tell()
            yield batch, first


def import_files(index: BannerIndex, paths: list[Path],
                 progress: Callable[[int, int, ImportReport], None] | None = None,
                 workers: int | None = None) -> ImportReport:
    """Load ``paths`` into ``index``; ``progress(done_bytes, total_bytes, report)`` after each batch.

    Parsing runs in ``workers`` processes (default: one per core beyond the first, at least one)
    while this one stores and indexes, in file order.
    """
    report = ImportReport()
    total = sum(p.stat().st_size for p in paths)
    workers = workers if workers is not None else max(1, (os.cpu_count() or 2) - 1)
    done_before = 0
    with index.writing() as writer, ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        for path in paths:
            position = [0]
            pending: deque = deque()
            for lines, first in _chunks_of(path, position):
                pending.append((pool.submit(prepare_lines, lines, path.name, first), position[0]))
                if len(pending) > 2 * workers:  # bounded: a huge file is never held in memory
                    _take(pending.popleft(), writer, report, progress, done_before, total)
            while pending:
                _take(pending.popleft(), writer, report, progress, done_before, total)
            done_before += path.stat().st_size
            if progress:
                progress(done_before, total, report)
    return report


def _take(item, writer, report: ImportReport, progress, done_before: int, total: int) -> None:
    future, position = item
    chunk: Chunk = future.result()
    report.read += chunk.read
    for where, why in chunk.problems:
        report.problem(where, why)
    _flush(writer, chunk.prepared, report)
    if progress:
        progress(done_before + position, total, report)


def import_banners(index: BannerIndex, banners: Iterable[dict]) -> ImportReport:
    """Load banners already in memory (demo data, scan results), in this process."""
    report = ImportReport()
    with index.writing() as writer:
        batch: list[tuple[int, bytes, bytes]] = []
        for b in banners:
            report.read += 1
            batch.append(prepare(normalize(b)))
            if len(batch) >= BATCH:
                _flush(writer, batch, report)
                batch = []
        _flush(writer, batch, report)
    return report


def _flush(writer, batch: list[tuple[int, bytes, bytes]], report: ImportReport) -> None:
    if batch:
        added = writer.add(batch)
        report.added += added
        report.duplicates += len(batch) - added
