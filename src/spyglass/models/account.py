from __future__ import annotations

from spyglass.models.base import APIModel


class AccountProfile(APIModel):
    member: bool
    credits: int
    display_name: str | None = None
    created: str | None = None


class UsageLimits(APIModel):
    scan_credits: int = 0
    query_credits: int = 0
    monitored_ips: int = 0


class ApiInfo(APIModel):
    """Plan information: what the key's account may do and what it has left."""

    plan: str
    scan_credits: int = 0
    query_credits: int = 0
    monitored_ips: int | None = None
    unlocked_left: int = 0
    usage_limits: UsageLimits | None = None
    https: bool = False
    unlocked: bool = False
    telnet: bool = False
