"""spyglass's own extension: what this backend holds (outside the original API's paths)."""

from __future__ import annotations

from fastapi import APIRouter

from spyglass.datagen import NETWORK
from spyglass.query import parse
from spyglass.server.deps import AppSettings, Banners, Who
from spyglass.server.scanner.private import PRIVATE

router = APIRouter(prefix="/spyglass")


@router.get("/info", summary="What this backend holds")
def backend_info(banners: Banners, settings: AppSettings, who: Who) -> dict:
    # Search's counts (the latest banner of each service) of what every account may read: a count
    # of every stored banner would rise with another account's private scan results (private.py).
    shared = f"-tag:{PRIVATE}"
    seen = banners.count(parse(shared), [])[0]
    demo = banners.get_meta("demo") == "1"
    synthetic = banners.count(parse(f"net:{NETWORK} {shared}"), [])[0] if demo else 0
    return {
        "banners": seen,
        "demo": demo,
        "demo_banners": synthetic,  # of them the demo's, and the user's own imported beside them
        "own_banners": seen - synthetic if demo else 0,
        "namespace": settings.namespace,
        "demo_rate": settings.demo_rate,  # synthetic banners collected a second (0: none)
    }
