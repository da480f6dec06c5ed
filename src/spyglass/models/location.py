from __future__ import annotations

from spyglass.models.base import APIModel


class Location(APIModel):
    """Where a banner's host is, per the intelligence service (nullable members: null when unknown)."""

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
