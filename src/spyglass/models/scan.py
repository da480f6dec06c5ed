from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from spyglass.models.base import APIModel


class ScanState(StrEnum):
    SUBMITTING = "SUBMITTING"
    QUEUE = "QUEUE"
    PROCESSING = "PROCESSING"
    DONE = "DONE"
    CANCELLED = "CANCELLED"  # beyond the seed: stopped by its owner (spyglass's backend)


class ScanSubmission(APIModel):
    id: str
    count: int | None = None
    credits_left: int | None = None


class ScanProgress(APIModel):
    """Progress members the embedded backend adds to scan status and listing items (the
    original service sends none: each is None there)."""

    probes: int | None = None  # connections the scan makes in all
    probed: int | None = None  # of those, finished
    found: int | None = None  # services found so far

    @property
    def fraction(self) -> float | None:
        if self.probes is None or self.probed is None:
            return None
        return 1.0 if not self.probes else min(1.0, self.probed / self.probes)


class ScanStatus(ScanProgress):
    id: str
    count: int
    status: ScanState | str
    created: str | None = None


class ScanListItem(ScanProgress):
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
