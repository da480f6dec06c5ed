"""The app factory: main API at ``/``; stream, trends and geonet hosts mount under it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fastapi import FastAPI

from spyglass import DEFAULT_NAMESPACE, __version__
from spyglass.server.auth import CreditHeaders, KeyRateLimiter
from spyglass.server.errors import install_error_handlers
from spyglass.server.geonet import GeonetSettings, create_geonet_app
from spyglass.server.index import BannerIndex
from spyglass.server.routers import account, search, status, tools
from spyglass.server.store import Store


@dataclass
class Settings:
    data_dir: Path
    namespace: str = DEFAULT_NAMESPACE
    rate_limit: float | None = None  # requests per second per key; None: unlimited
    geonet: GeonetSettings = field(default_factory=GeonetSettings)


def create_app(settings: Settings, store: Store | None = None) -> FastAPI:
    store = store or Store(settings.data_dir)
    app = FastAPI(title="spyglass intelligence API", version=__version__,
                  description="The internet intelligence API, served by spyglass's embedded backend.")
    app.state.settings = settings
    app.state.store = store
    app.state.rate_limiter = KeyRateLimiter(settings.rate_limit) if settings.rate_limit else None
    app.state.index = BannerIndex(settings.data_dir)
    install_error_handlers(app)
    app.include_router(account.router)
    app.include_router(tools.router)
    app.include_router(search.router, prefix=f"/{settings.namespace}")
    app.include_router(status.router)
    app.add_middleware(CreditHeaders)
    app.mount("/geonet", create_geonet_app(settings.geonet))
    return app
