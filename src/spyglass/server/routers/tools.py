"""Utility methods: the caller's address and the headers its client sent."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from spyglass.server.auth import Caller, caller

router = APIRouter(prefix="/tools")


def _header_name(raw: bytes) -> str:
    return "-".join(part.capitalize() for part in raw.decode("latin-1").split("-"))


@router.get("/httpheaders", response_model=dict[str, str])
def http_headers(request: Request, who: Caller = Depends(caller)) -> dict[str, str]:
    return {_header_name(k): v.decode("latin-1") for k, v in request.scope["headers"]}


@router.get("/myip", response_model=str)
def my_ip(request: Request, who: Caller = Depends(caller)) -> str:
    return request.client.host if request.client else "unknown"
