"""Bulk data (enterprise): ``/{ns}/data`` lists the datasets, ``/{ns}/data/{dataset}`` their files,
and each file downloads from its ``url`` (``/{ns}/data/{dataset}/{name}``, with the key), with
HTTP range requests so that an interrupted download resumes.

The files are produced by :class:`spyglass.server.datasets.DatasetService` (see there).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from spyglass.models import Dataset, DatasetFile
from spyglass.server.datasets import DATASETS
from spyglass.server.deps import AppSettings, Datasets, Who
from spyglass.server.errors import ApiError, ErrorBody, not_found, responses

router = APIRouter()

WHAT = "Bulk data"
SETTLE = 5.0  # seconds a listing waits at most for files of banners that just arrived
CHUNK = 256 * 1024
_RANGE = re.compile(r"bytes=([0-9]*)-([0-9]*)\Z")  # ASCII digits only
RANGE_ERRORS: dict[int | str, dict[str, Any]] = {
    **responses(403, 404),
    416: {"model": ErrorBody, "description": "The range starts past the end of the file (see Content-Range)"},
}


def dataset_named(name: str) -> Dataset:
    if name not in DATASETS:
        raise not_found(f"No such dataset: {name} (there are {', '.join(DATASETS)})")
    return DATASETS[name]


@router.get("/data", response_model=list[Dataset], responses=responses(403))
def datasets(who: Who) -> list[Dataset]:
    who.require_enterprise(WHAT)
    return list(DATASETS.values())


@router.get("/data/{dataset}", response_model=list[DatasetFile], responses=responses(403, 404))
async def dataset_files(
    request: Request, dataset: str, service: Datasets, settings: AppSettings, who: Who
) -> list[DatasetFile]:
    who.require_enterprise(WHAT)
    dataset_named(dataset)
    await service.settled(SETTLE)  # banners that just arrived: their files, if they come quickly
    base = f"{str(request.base_url).rstrip('/')}/{settings.namespace}/data/{dataset}"
    return [
        DatasetFile(url=f"{base}/{f.name}", timestamp=f.timestamp, sha1=f.sha1, name=f.name, size=f.size)
        for f in service.files(dataset)
    ]


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The ``(first, last)`` bytes a ``Range`` header asks for, or None for the whole file (no
    header, or one this server ignores as HTTP allows: several ranges, another unit, malformed).
    A range that starts past the end answers 416."""
    match = _RANGE.match(header.strip()) if header else None
    if match is None or match.groups() == ("", ""):
        return None
    first, last = (_bounded(g) for g in match.groups())
    if first is None:  # the last N bytes
        if last == 0:
            raise unsatisfiable(size)
        assert last is not None
        return max(0, size - last), size - 1
    start, end = first, min(last, size - 1) if last is not None else size - 1
    if last is not None and last < start:
        return None  # malformed: ignored
    if start >= size:
        raise unsatisfiable(size)
    return start, end


def _bounded(digits: str) -> int | None:
    """A byte position; past any file's size when it has more digits than one can have (a number
    of thousands of digits is not parsed, which Python refuses to do past 4,300 anyway)."""
    if not digits:
        return None
    return int(digits) if len(digits) <= 18 else 10**18


def unsatisfiable(size: int) -> ApiError:
    return ApiError(
        416, f"The range starts past the end of the file ({size} bytes)", headers={"Content-Range": f"bytes */{size}"}
    )


def opened(path: Path) -> BinaryIO | None:
    """The file, open (a rebuild renaming a new one in later leaves this one whole), or None if gone."""
    try:
        return open(path, "rb")  # noqa: SIM115 (closed by read())
    except FileNotFoundError:
        return None


def read(handle: BinaryIO, first: int, count: int) -> Iterator[bytes]:
    """``count`` bytes of an open file from ``first``; closes it."""
    try:
        handle.seek(first)
        while count > 0:
            chunk = handle.read(min(CHUNK, count))
            if not chunk:
                return
            count -= len(chunk)
            yield chunk
    finally:
        handle.close()


@router.get(
    "/data/{dataset}/{name}",
    summary="Download a dataset file (Range requests resume)",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/gzip": {}}}, 206: {"description": "Part of the file"}, **RANGE_ERRORS},
)
def download(request: Request, dataset: str, name: str, service: Datasets, who: Who) -> StreamingResponse:
    who.require_enterprise(WHAT)
    dataset_named(dataset)
    built = service.file(dataset, name)  # only a listed name: never a path the caller made up
    handle = opened(service.path(built)) if built else None
    if built is None or handle is None:
        raise not_found(f"No such file in dataset {dataset}: {name}")
    size = os.fstat(handle.fileno()).st_size
    etag = f'"{built.sha1}"'
    headers = {"Accept-Ranges": "bytes", "ETag": etag, "Content-Disposition": f'attachment; filename="{name}"'}
    if_range = request.headers.get("if-range")
    try:
        wanted = byte_range(request.headers.get("range"), size) if if_range in (None, etag) else None
    except ApiError:
        handle.close()
        raise
    status, first, last = (200, 0, size - 1) if wanted is None else (206, *wanted)
    if status == 206:
        headers["Content-Range"] = f"bytes {first}-{last}/{size}"
    headers["Content-Length"] = str(last - first + 1)
    return StreamingResponse(
        read(handle, first, last - first + 1), status_code=status, headers=headers, media_type="application/gzip"
    )
