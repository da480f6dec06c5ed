"""Typed FastAPI dependencies: what a route needs of the backend, declared in its signature
rather than read from untyped ``app.state`` attributes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from spyglass.server.bannerstore import BannerStore


async def _banner_store(request: Request) -> BannerStore:  # async: no thread for a lookup
    return request.app.state.banners


Banners = Annotated[BannerStore, Depends(_banner_store)]
