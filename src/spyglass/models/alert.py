from __future__ import annotations

from typing import Any

from pydantic import Field

from spyglass.models.base import APIModel


class AlertFilters(APIModel):
    ip: list[str] = Field(default_factory=list)


class Alert(APIModel):
    id: str
    name: str
    created: str | None = None
    filters: AlertFilters = Field(default_factory=AlertFilters)
    size: int | None = None
    expires: int | None = 0
    expiration: str | None = None
    expired: bool | None = None
    triggers: dict[str, Any] = Field(default_factory=dict)
    has_triggers: bool | None = None
    notify: dict[str, Any] | None = None
    notifiers: list[dict[str, Any]] | None = None
    api_key: str | None = None


class Attached(APIModel):
    """The answer to attaching a notifier: attached, with a warning when it cannot deliver yet."""

    success: bool
    warning: str | None = None


class Trigger(APIModel):
    name: str
    rule: str
    description: str = ""


class Notification(APIModel):
    """One delivery attempt of an alert's notification (``/alert/{id}/notifications``)."""

    at: str
    event: str
    notifier: str
    provider: str
    attempt: int = 1
    outcome: str  # "sent", "retry" (will be tried again), "failed" (given up) or "dropped" (notifier deleted)
    detail: str = ""
    service: str | None = None
    triggers: list[str] = Field(default_factory=list)
