"""spyglass's own extension: what this backend holds (outside the original API's paths)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from spyglass.server.auth import Caller, caller

router = APIRouter(prefix="/spyglass")


@router.get("/info", summary="What this backend holds")
def backend_info(request: Request, who: Caller = Depends(caller)) -> dict:
    index = request.app.state.index
    return {
        "banners": index.total(),
        "demo": index.records.get_meta("demo") == "1",
        "namespace": request.app.state.settings.namespace,
    }
