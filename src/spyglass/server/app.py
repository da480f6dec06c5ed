"""The app factory: main API at ``/``; stream, trends and geonet hosts mount under it.

Every section is ``routers/<section>.py`` exporting ``router``; this module is the one place that
says where each is mounted: under the namespace prefix (``/intel/...``) or at the root.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC
from typing import Protocol

from fastapi import FastAPI

from spyglass import __version__
from spyglass.server.alerts import install_alerts
from spyglass.server.auth import CreditHeaders, Hourly, KeyBeforeBody, KeyCheck, KeyRateLimiter
from spyglass.server.banners.store import BannerStore
from spyglass.server.collect import Collector
from spyglass.server.datasets import DatasetService
from spyglass.server.errors import document_errors, install_error_handlers
from spyglass.server.guard import LoadShedding
from spyglass.server.inflight import AccountInFlight
from spyglass.server.lane import HeavyLane
from spyglass.server.mail import Outbox
from spyglass.server.routers import account, alerts, data, directory, dns, notifiers, org, scans, search, status, tools
from spyglass.server.routers.geonet import create_geonet_app
from spyglass.server.routers.trends import create_trends_app
from spyglass.server.scanner.service import ScanService
from spyglass.server.settings import Settings
from spyglass.server.state.accounts import AccountState
from spyglass.server.stores import (
    open_account_state,
    open_alert_state,
    open_banner_store,
    open_directory_state,
    open_scan_state,
)
from spyglass.server.stream import DemoCollector, StoreFollower, StreamHub, create_stream_app, replay

# paths as the seed writes them (/account/..., /tools/...), and spyglass's own (/spyglass/...)
ROOT_SECTIONS = (account, tools, status, replay, notifiers, dns, org)
NAMESPACED_SECTIONS = (search, scans, alerts, directory, data)  # paths under /{namespace}: /intel/host/...


class BackgroundService(Protocol):
    """Work the backend does beside answering requests (the collector, scans, deliveries):
    started when the server starts, stopped in reverse order when it stops."""

    async def start(self) -> None: ...
    async def stop(self) -> None: ...


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    started: list[BackgroundService] = []
    try:
        for service in app.state.services:
            await service.start()
            started.append(service)
        yield
    finally:
        for service in reversed(started):
            await service.stop()


def create_app(settings: Settings, store: AccountState | None = None) -> FastAPI:
    store = store or open_account_state(settings.state, settings.data_dir)
    app = FastAPI(
        redirect_slashes=False,  # a path with a slash too many is a 404, never a 307 to one built from Host
        lifespan=lifespan,
        title="spyglass intelligence API",
        version=__version__,
        description="The internet intelligence API, served by spyglass's embedded backend. "
        'Errors answer a status code and a JSON body {"error": message}.',
    )
    app.state.settings = settings
    app.state.store = store
    app.state.rate_limiter = KeyRateLimiter(settings.rate_limit) if settings.rate_limit else None
    app.state.keys = KeyCheck(store)  # who a key is, shared by the hosts
    banners: BannerStore = open_banner_store(settings.store, settings.data_dir)
    app.state.banners = banners
    app.state.collector = Collector(banners, apart=settings.collect_apart)
    # In start order; each section that works in the background appends its service here.
    app.state.directory = open_directory_state(
        settings.state, settings.data_dir
    )  # opened here: a damaged file stops the start
    app.state.scans = ScanService(
        open_scan_state(settings.state, settings.data_dir),
        app.state.collector,
        banners,
        concurrency=settings.scan_concurrency,
        timeout=settings.scan_timeout,
        rate=settings.scan_rate,
        lease=settings.scan_lease,
    )
    app.state.services = [app.state.collector, app.state.scans]
    app.state.hub = StreamHub(settings.namespace)
    if settings.follow_store:  # other backends collect into the store too: publish what it gains
        app.state.services.append(StoreFollower(banners, app.state.hub))
    else:
        app.state.collector.subscribe(app.state.hub.publish)
    app.state.services += [app.state.hub, DemoCollector(app.state.collector, banners, settings.demo_rate)]
    app.state.outbox = Outbox(settings.smtp_server)  # e-mail sent after the answer (invitations)
    app.state.hourly = Hourly()  # a plan's numbers an hour (alert networks written)
    app.state.services.append(app.state.outbox)
    install_alerts(app, open_alert_state(settings.state, settings.data_dir, clock=store.clock))
    app.state.datasets = DatasetService(
        settings.data_dir,
        banners,
        clock=lambda: store.clock().replace(tzinfo=UTC).timestamp(),
        build_files=settings.bulk_data,
    )
    app.state.collector.subscribe(lambda _: app.state.datasets.wake())
    app.state.services.append(app.state.datasets)
    install_error_handlers(app)
    document_errors(app)
    for section in ROOT_SECTIONS:
        app.include_router(section.router)
    for section in NAMESPACED_SECTIONS:
        app.include_router(section.router, prefix=f"/{settings.namespace}")
    app.add_middleware(CreditHeaders)
    app.add_middleware(LoadShedding, limit=settings.limits.max_in_flight)
    # outside LoadShedding: a heavy request waiting for its turn takes none of its slots
    app.add_middleware(HeavyLane, limit=settings.limits.heavy())
    # outside LoadShedding: an account past its plan's requests at once takes none of its slots
    app.add_middleware(AccountInFlight, keys=app.state.keys)
    # outside LoadShedding: a body is in whole before the request takes a slot
    app.add_middleware(
        KeyBeforeBody, keys=app.state.keys, max_body=replay.MAX_BODY, max_receiving=settings.limits.receiving()
    )
    hosts = {
        "stream": create_stream_app(app.state.hub, app),
        "trends": create_trends_app(banners, app.state.keys, app.state.rate_limiter),
        "geonet": create_geonet_app(settings.geonet),
    }
    for name, host in hosts.items():
        app.mount(f"/{name}", host)
    app.state.hosts = tuple(hosts)  # the mounted hosts that serve an API: what `serve` announces
    return app
