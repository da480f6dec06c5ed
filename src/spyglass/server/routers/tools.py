"""Utility methods: the caller's address and the headers its client sent."""

from __future__ import annotations

from fastapi import APIRouter, Request

from spyglass.server.deps import Who

router = APIRouter(prefix="/tools")


def _header_name(raw: bytes) -> str:
    return "-".join(part.capitalize() for part in raw.decode("latin-1").split("-"))


@router.get("/httpheaders", response_model=dict[str, str])
def http_headers(request: Request, who: Who) -> dict[str, str]:
    return {_header_name(k): v.decode("latin-1") for k, v in request.scope["headers"]}


@router.get("/myip", response_model=str)
def my_ip(request: Request, who: Who) -> str:
    return request.client.host if request.client else "unknown"
