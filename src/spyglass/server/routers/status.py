"""spyglass's own extension: what this backend holds (outside the original API's paths)."""

from __future__ import annotations

from fastapi import APIRouter

from spyglass.datagen import NETWORK
from spyglass.query import parse
from spyglass.server.deps import AppSettings, Banners, Who

router = APIRouter(prefix="/spyglass")


@router.get("/info", summary="What this backend holds")
def backend_info(banners: Banners, settings: AppSettings, who: Who) -> dict:
    demo = banners.get_meta("demo") == "1"
    return {
        "banners": banners.total(),
        "demo": demo,
        # search's counts (the latest banner of each service) of the synthetic and of the user's
        # own, imported beside the demo's
        "demo_banners": banners.count(parse(f"net:{NETWORK}"), [])[0] if demo else 0,
        "own_banners": banners.count(parse(f"-net:{NETWORK}"), [])[0] if demo else 0,
        "namespace": settings.namespace,
        "demo_rate": settings.demo_rate,  # synthetic banners collected a second (0: none)
    }
