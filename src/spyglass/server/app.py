"""The app factory: main API at ``/``; stream, trends and geonet hosts mount under it.

Every section is ``routers/<section>.py`` exporting ``router``; this module is the one place that
says where each is mounted: under the namespace prefix (``/intel/...``) or at the root.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import Protocol

from fastapi import FastAPI

from spyglass import DEFAULT_NAMESPACE, __version__
from spyglass.server.auth import CreditHeaders, KeyRateLimiter
from spyglass.server.collect import Collector
from spyglass.server.datasets import DatasetService
from spyglass.server.errors import document_errors, install_error_handlers
from spyglass.server.index import BannerIndex
from spyglass.server.routers import account, data, org, search, status, tools
from spyglass.server.routers.geonet import GeonetSettings, create_geonet_app
from spyglass.server.store import Store

ROOT_SECTIONS = (account, tools, status, org)  # paths as the seed writes them: /account/..., /tools/...
NAMESPACED_SECTIONS = (search, data)  # paths under /{namespace}: /intel/host/...
UNBUILT_HOSTS = ("stream", "trends")  # mounted so that every path under them answers a JSON 404


@dataclass
class Settings:
    data_dir: Path
    namespace: str = DEFAULT_NAMESPACE
    rate_limit: float | None = None  # requests per second per key; None: unlimited
    geonet: GeonetSettings = field(default_factory=GeonetSettings)
    smtp_server: tuple[str, int] | None = None  # (host, port) for e-mail; None: e-mail is not sent


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


def create_app(settings: Settings, store: Store | None = None) -> FastAPI:
    store = store or Store(settings.data_dir)
    app = FastAPI(
        lifespan=lifespan,
        title="spyglass intelligence API",
        version=__version__,
        description="The internet intelligence API, served by spyglass's embedded backend. "
        'Errors answer a status code and a JSON body {"error": message}.',
    )
    app.state.settings = settings
    app.state.store = store
    app.state.rate_limiter = KeyRateLimiter(settings.rate_limit) if settings.rate_limit else None
    app.state.index = BannerIndex(settings.data_dir)
    app.state.collector = Collector(app.state.index)
    # In start order; each section that works in the background appends its service here.
    app.state.services = [app.state.collector]
    app.state.datasets = DatasetService(
        settings.data_dir, app.state.index.records, clock=lambda: store.clock().replace(tzinfo=UTC).timestamp()
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
    hosts = {"geonet": create_geonet_app(settings.geonet)}
    for name, host in hosts.items():
        app.mount(f"/{name}", host)
    for name in UNBUILT_HOSTS:
        app.mount(f"/{name}", unbuilt_host(name))
    app.state.hosts = tuple(hosts)  # the mounted hosts that serve an API: what `serve` announces
    return app


def unbuilt_host(name: str) -> FastAPI:
    """A host that has no methods yet: every path answers 404 ``{"error": "No such method"}``."""
    host = FastAPI(title=f"spyglass {name}", openapi_url=None, docs_url=None, redoc_url=None)
    install_error_handlers(host)
    return host
