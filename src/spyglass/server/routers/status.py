"""spyglass's own extension: what this backend holds (outside the original API's paths)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from spyglass.server.auth import Caller, caller
from spyglass.server.deps import Banners, settings_of

router = APIRouter(prefix="/spyglass")


@router.get("/info", summary="What this backend holds")
def backend_info(request: Request, banners: Banners, who: Caller = Depends(caller)) -> dict:
    return {
        "banners": banners.total(),
        "demo": banners.get_meta("demo") == "1",
        "namespace": settings_of(request).namespace,
        "demo_rate": settings_of(request).demo_rate,  # synthetic banners collected a second (0: none)
    }
