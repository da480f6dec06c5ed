"""The dashboard's link to the service: the profile, the embedded backend when there is no
other, and the clients. Nothing here blocks the UI thread: slow steps run in threads."""

from __future__ import annotations

import asyncio
import importlib
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from spyglass.config import Profile

if TYPE_CHECKING:
    from spyglass.client import Clients
    from spyglass.models import ApiInfo


class State(str, Enum):
    STARTING = "starting backend"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    FAILED = "unreachable"


class Connection:
    def __init__(self, profile: Profile, data: Path | None = None) -> None:
        self.requested = profile  # as configured; ``profile`` gains the URL once a backend runs
        self.profile = profile
        self.data = data
        self.backend = None
        self.clients: Clients | None = None

    @property
    def endpoint(self) -> str:
        if self.profile.url:
            return self.profile.url
        return "embedded backend"

    @property
    def opening_state(self) -> State:
        """What the status bar says until the connection is open."""
        return State.STARTING if self.requested.embedded else State.CONNECTING

    async def open(self) -> ApiInfo:
        """Start what is needed and check the key; raises on failure with a readable message."""
        if self.profile.embedded:
            from spyglass.server.launcher import EmbeddedBackend

            self.backend = EmbeddedBackend(self.data, self.profile.namespace)
            self.profile = await asyncio.to_thread(self.backend.start)
            await self.backend.wait_ready()
        if self.clients is None:
            # The client stack loads off the UI thread, after the first screen is up.
            client = await asyncio.to_thread(importlib.import_module, "spyglass.client")
            self.clients = client.Clients.from_profile(self.profile)
        return await self.clients.intel.api_info()

    async def close(self) -> None:
        clients, self.clients = self.clients, None
        if clients is not None:
            await clients.aclose()
        backend, self.backend = self.backend, None
        if backend is not None:
            await asyncio.to_thread(backend.stop)
