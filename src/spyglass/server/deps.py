"""Typed FastAPI dependencies: what a route needs of the backend, declared in its signature
(``who: Who``, ``alerts: Alerts``) rather than read from untyped ``app.state`` attributes.

``create_app`` puts each part on ``app.state``; this module reads them back, and basedeps.py the
caller (``Who``) and the alert state (``Alerts``), a floor below, for the routes a feature defines
itself (the stream host's); routers/ find those here too.
The lookups are async: FastAPI would run a plain function in a thread, for an attribute read.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from spyglass.server.alerts.bodies import BodyReader
from spyglass.server.alerts.delivery import DeliveryWorker
from spyglass.server.auth import Charger, Hourly, KeyCheck
from spyglass.server.banners.store import BannerStore
from spyglass.server.basedeps import Alerts as Alerts  # (the alert state: a floor below, for the stream host)
from spyglass.server.basedeps import Who
from spyglass.server.datasets import DatasetService
from spyglass.server.mail import Outbox
from spyglass.server.scanner.service import ScanService
from spyglass.server.settings import Settings
from spyglass.server.state.accounts import AccountState
from spyglass.server.state.directory import DirectoryState


async def _charger(request: Request, who: Who) -> Charger:
    return Charger(request.app.state.keys, who)


async def _keys(request: Request) -> KeyCheck:
    return request.app.state.keys


async def _banners(request: Request) -> BannerStore:
    return request.app.state.banners


async def _settings(request: Request) -> Settings:
    return request.app.state.settings


async def _accounts(request: Request) -> AccountState:
    return request.app.state.store


async def _deliveries(request: Request) -> DeliveryWorker:
    return request.app.state.alert_delivery


async def _alert_bodies(request: Request) -> BodyReader:
    return request.app.state.alert_bodies


async def _scans(request: Request) -> ScanService:
    return request.app.state.scans


async def _datasets(request: Request) -> DatasetService:
    return request.app.state.datasets


async def _directory(request: Request) -> DirectoryState:
    return request.app.state.directory


async def _outbox(request: Request) -> Outbox:
    return request.app.state.outbox


async def _hourly(request: Request) -> Hourly:
    return request.app.state.hourly


Charge = Annotated[Charger, Depends(_charger)]  # charge(query=1): spends the caller's credits
Keys = Annotated[KeyCheck, Depends(_keys)]  # who a key is (a key's account, kept a few seconds)
Banners = Annotated[BannerStore, Depends(_banners)]
AppSettings = Annotated[Settings, Depends(_settings)]
Accounts = Annotated[AccountState, Depends(_accounts)]  # accounts, keys, plans, credits, organizations
Deliveries = Annotated[DeliveryWorker, Depends(_deliveries)]
AlertBodies = Annotated[BodyReader, Depends(_alert_bodies)]  # reads an alert's create or edit body
Scans = Annotated[ScanService, Depends(_scans)]  # its ``store`` holds the scans' rows
Datasets = Annotated[DatasetService, Depends(_datasets)]
SavedQueries = Annotated[DirectoryState, Depends(_directory)]
Mail = Annotated[Outbox, Depends(_outbox)]
PerHour = Annotated[Hourly, Depends(_hourly)]  # a plan's numbers an hour, by account: kept by this backend
