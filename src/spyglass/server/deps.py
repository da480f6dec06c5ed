"""Typed FastAPI dependencies: what a route needs of the backend, declared in its signature
rather than read from untyped ``app.state`` attributes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Request

from spyglass.server.bannerstore import BannerStore

if TYPE_CHECKING:
    from spyglass.server.alerts.delivery import DeliveryWorker
    from spyglass.server.alerts.store import AlertStore
    from spyglass.server.datasets import DatasetService
    from spyglass.server.scanner.service import ScanService
    from spyglass.server.scanner.store import ScanStore
    from spyglass.server.settings import Settings


async def _banner_store(request: Request) -> BannerStore:  # async: no thread for a lookup
    return request.app.state.banners


Banners = Annotated[BannerStore, Depends(_banner_store)]


def settings_of(request: Request) -> Settings:
    return request.app.state.settings


def alerts_of(request: Request) -> AlertStore:
    return request.app.state.alerts


def delivery_of(request: Request) -> DeliveryWorker:
    return request.app.state.alert_delivery


def datasets_of(request: Request) -> DatasetService:
    return request.app.state.datasets


def scans_of(request: Request) -> tuple[ScanStore, ScanService]:
    return request.app.state.scan_store, request.app.state.scans
