from __future__ import annotations

from typing import Any

from pydantic import Field

from spyglass.models.base import APIModel


class Notifier(APIModel):
    id: str
    provider: str
    description: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)


class NotifierList(APIModel):
    matches: list[Notifier] = Field(default_factory=list)
    total: int = 0


class ProviderSpec(APIModel):
    required: list[str] = Field(default_factory=list)


class NotifierCreated(APIModel):
    id: str
    success: bool = True


class NotifierTest(APIModel):
    """The outcome of a test send (``POST /notifier/{id}/test``)."""

    id: str
    success: bool
    detail: str = ""
