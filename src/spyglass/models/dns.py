from __future__ import annotations

from pydantic import Field

from spyglass.models.base import APIModel


class DomainRecord(APIModel):
    subdomain: str = ""
    type: str
    value: str
    last_seen: str | None = None


class DomainInfo(APIModel):
    domain: str
    tags: list[str] = Field(default_factory=list)
    data: list[DomainRecord] = Field(default_factory=list)
    subdomains: list[str] = Field(default_factory=list)
    more: bool = False
