from __future__ import annotations

from pydantic import Field

from spyglass.models.banner import Banner
from spyglass.models.base import APIModel


class HostRecord(APIModel):
    """Everything known about one address: general information plus its banners."""

    ip: int | None = None
    ip_str: str
    asn: str | None = None
    isp: str | None = None
    org: str | None = None
    os: str | None = None
    hostnames: list[str] = Field(default_factory=list)
    domains: list[str] = Field(default_factory=list)
    ports: list[int] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    vulns: list[str] = Field(default_factory=list)
    last_update: str | None = None
    data: list[Banner] = Field(default_factory=list)
    city: str | None = None
    region_code: str | None = None
    area_code: int | None = None
    dma_code: int | None = None
    postal_code: str | None = None
    country_code: str | None = None
    country_code3: str | None = None
    country_name: str | None = None
    latitude: float | None = None
    longitude: float | None = None
