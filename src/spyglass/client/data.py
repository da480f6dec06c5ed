"""Bulk data (``/{ns}/data...``, enterprise): datasets, their files, and downloading a file with
resume (HTTP range requests) and SHA-1 verification."""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import httpx

from spyglass import models as m
from spyglass.client.base import HostClient, segment
from spyglass.client.errors import APIError, NotFound, SpyglassError, TransportError
from spyglass.client.transport import RETRY_STATUSES, error_from_response

PART = ".part"  # a download in progress: DEST.part, renamed to DEST once its SHA-1 checks
CHUNK = 256 * 1024

Progress = Callable[[int, int | None], None]  # (bytes on disk, total bytes or None)


class ChecksumMismatch(SpyglassError):
    """The downloaded file's SHA-1 is not the one the listing gave (the partial file is removed)."""


def part_path(dest: Path) -> Path:
    return dest.with_name(dest.name + PART)


def sha1_of(path: Path, done: int | None = None) -> hashlib._Hash:
    """The SHA-1 state of the first ``done`` bytes of ``path`` (all of it by default)."""
    digest = hashlib.sha1()
    left = path.stat().st_size if done is None else done
    with open(path, "rb") as f:
        while left > 0 and (chunk := f.read(min(CHUNK, left))):
            digest.update(chunk)
            left -= len(chunk)
    return digest


class _StartOver(Exception):
    """The server cannot continue the partial file: it is removed and fetched whole."""


class DataClient(HostClient):
    """Datasets and their downloadable files."""

    async def datasets(self) -> list[m.Dataset]:
        return await self.call(list[m.Dataset], "GET", self.ns("/data"))

    async def files(self, dataset: str) -> list[m.DatasetFile]:
        return await self.call(list[m.DatasetFile], "GET", self.ns(f"/data/{segment(dataset)}"))

    async def file(self, dataset: str, name: str) -> m.DatasetFile:
        """How ``dataset`` lists its file ``name`` now: :class:`NotFound` if it lists none so named."""
        chosen = next((f for f in await self.files(dataset) if f.name == name), None)
        if chosen is None:
            raise NotFound(f"no file {name} in dataset {dataset}", 404)
        return chosen

    async def download(self, file: m.DatasetFile, dest: Path, progress: Progress | None = None) -> Path:
        """Download ``file`` to ``dest``; returns ``dest``.

        Bytes go to ``dest.part`` first; an interrupted download leaves it, and the next call
        resumes from its end (``Range``, with ``If-Range`` so that a changed file starts over).
        Connection failures and busy answers (429, 502-504) are retried, resuming, as the
        transport's retry policy allows. The finished file's SHA-1 is checked when the listing
        gave one: :class:`ChecksumMismatch` (and the partial file removed) if it differs; then
        ``dest.part`` is renamed to ``dest``.
        """
        dest = Path(dest)
        part = part_path(dest)
        attempt, started_over = 0, False
        while True:
            try:
                await self._fetch(file, part, progress)
                break
            except _StartOver:
                if started_over:
                    raise SpyglassError(f"{file.name}: the server cannot send the file from its start") from None
                part.unlink(missing_ok=True)
                started_over = True
            except (TransportError, APIError) as exc:
                status = getattr(exc, "status", None)
                if status is not None and status not in RETRY_STATUSES or attempt + 1 >= self.transport.retry.attempts:
                    raise
                await asyncio.sleep(self.transport.retry.delay(attempt, getattr(exc, "retry_after", None)))
                attempt += 1
        if file.sha1:
            got = (await asyncio.to_thread(sha1_of, part)).hexdigest()
            if got != file.sha1.lower():
                part.unlink(missing_ok=True)
                raise ChecksumMismatch(
                    f"{file.name}: SHA-1 {got} is not the listed {file.sha1}; the download was removed"
                )
        os.replace(part, dest)
        return dest

    async def _fetch(self, file: m.DatasetFile, part: Path, progress: Progress | None) -> None:
        """Bring ``part`` to the whole file, resuming from what it holds."""
        have = part.stat().st_size if part.exists() else 0
        if have and have == file.size:
            return  # complete already (the checksum decides if it is right)
        headers = {}
        if 0 < have < file.size:
            headers["Range"] = f"bytes={have}-"
            if file.sha1:
                headers["If-Range"] = f'"{file.sha1}"'
        elif have:
            have = 0  # larger than the file: start over
        try:
            async with self.transport.download_stream(file.url, headers=headers) as response:
                if response.status_code == 416 and have:
                    raise _StartOver  # the server's file is shorter than what we hold
                if not response.is_success:
                    await response.aread()
                    raise error_from_response(response, None)
                resumed = response.status_code == 206
                if resumed and _range_start(response) != have:
                    raise _StartOver  # not the bytes we asked for
                total = _total(response, file.size)
                done = have if resumed else 0
                # Disk work goes to a thread: a dashboard's event loop never waits on it.
                out = await asyncio.to_thread(open, part, "ab" if resumed else "wb")
                try:
                    if progress:
                        progress(done, total)
                    async for chunk in response.aiter_bytes(CHUNK):
                        await asyncio.to_thread(out.write, chunk)
                        done += len(chunk)
                        if progress:
                            progress(done, total)
                    await asyncio.to_thread(_sync, out)
                finally:
                    await asyncio.to_thread(out.close)
        except httpx.TransportError as exc:
            raise self.transport.transport_error(exc) from None


async def download_current(
    data: DataClient, dataset: str, name: str, dest: Path, progress: Progress | None = None
) -> m.DatasetFile:
    """Download the file ``name`` of ``dataset`` as it is listed now to ``dest``; returns that
    listing. A file can be rebuilt at any time (banners of its day collected late), so a
    listing kept from earlier may name bytes that are gone: it is listed right before the
    download, and when the bytes fail their SHA-1 because the listing changed meanwhile (the
    server answered with the new file), listed and downloaded once more. (A function rather than
    a method: it is two requests, the client's methods are one each.)"""
    file = await data.file(dataset, name)
    try:
        await data.download(file, dest, progress)
    except ChecksumMismatch:
        fresh = await data.file(dataset, name)
        if (fresh.sha1, fresh.size) == (file.sha1, file.size):
            raise  # the same file: its bytes were wrong, not changed
        file = fresh
        await data.download(file, dest, progress)
    return file


def _sync(out) -> None:
    out.flush()
    os.fsync(out.fileno())


def _range_start(response: httpx.Response) -> int | None:
    """The first byte of a 206 answer (``Content-Range: bytes 100-199/200``)."""
    unit, _, spec = response.headers.get("content-range", "").partition(" ")
    first = spec.partition("-")[0]
    return int(first) if unit == "bytes" and first.isdigit() else None


def _total(response: httpx.Response, listed: int) -> int | None:
    total = response.headers.get("content-range", "").rpartition("/")[2]
    if total.isdigit():
        return int(total)
    length = response.headers.get("content-length", "")
    return int(length) if length.isdigit() else (listed or None)
