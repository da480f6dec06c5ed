from __future__ import annotations

from spyglass.models.base import APIModel


class Dataset(APIModel):
    name: str
    scope: str
    description: str = ""


class DatasetFile(APIModel):
    url: str
    timestamp: int
    sha1: str | None = None
    name: str
    size: int
