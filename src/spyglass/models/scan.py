from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from spyglass.models.base import APIModel


class ScanState(StrEnum):
    SUBMITTING = "SUBMITTING"
    QUEUE = "QUEUE"
    PROCESSING = "PROCESSING"
    DONE = "DONE"


class ScanSubmission(APIModel):
    id: str
    count: int | None = None
    credits_left: int | None = None


class ScanStatus(APIModel):
    id: str
    count: int
    status: ScanState | str
    created: str | None = None


class ScanListItem(APIModel):
    id: str
    status: ScanState | str
    created: str | None = None
    status_check: str | None = None
    credits_left: int | None = None
    api_key: str | None = None
    size: int | None = None


class ScanList(APIModel):
    matches: list[ScanListItem] = Field(default_factory=list)
    total: int = 0
