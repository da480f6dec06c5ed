"""spyglass's own extension: what this backend holds (outside the original API's paths)."""

from __future__ import annotations

from fastapi import APIRouter

from spyglass.server.deps import AppSettings, Banners, Who

router = APIRouter(prefix="/spyglass")


@router.get("/info", summary="What this backend holds")
def backend_info(banners: Banners, settings: AppSettings, who: Who) -> dict:
    return {
        "banners": banners.total(),
        "demo": banners.get_meta("demo") == "1",
        "namespace": settings.namespace,
        "demo_rate": settings.demo_rate,  # synthetic banners collected a second (0: none)
    }
