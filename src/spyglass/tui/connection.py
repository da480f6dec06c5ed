"""The dashboard's link to the service: the profile, the embedded backend when there is no
other (watched, and restarted when it dies), and the clients. Nothing here blocks the UI thread:
slow steps run in threads."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from spyglass.config import ENV_KEY, Profile

if TYPE_CHECKING:
    from spyglass.client import Clients
    from spyglass.local.launcher import EmbeddedBackend
    from spyglass.models import ApiInfo

POLL_INTERVAL = 0.5  # seconds between checks that the embedded backend is alive
QUICK_EXIT = 30.0  # a backend that dies this soon after a start counts as one that cannot start
MAX_QUICK_EXITS = 3  # then the watch gives up and says so

# ("died", why) when the backend exits, ("restarted", where) once a new one answers (reconnect
# then: open() uses it), ("failed", why) when the watch gives up.
BackendEvent = Callable[[str, str], None]


class State(StrEnum):
    STARTING = "starting backend"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    FAILED = "unreachable"
    REFUSED = "refused"  # the server answered but refused the key or the plan: not a network fault


class KeyRefused(RuntimeError):
    """The server refused the profile's key; the message names the profile and the URL."""


class Connection:
    def __init__(self, profile: Profile, data: Path | None = None, started: EmbeddedBackend | None = None) -> None:
        self.requested = profile  # as configured; ``profile`` gains the URL once a backend runs
        self.profile = profile
        self.data = data
        self.backend: EmbeddedBackend | None = None
        self._started = started  # the embedded backend, started before the dashboard loaded: the first open uses it
        self.clients: Clients | None = None
        self._retired: list[Clients] = []  # clients of a backend that died, closed at the next restart
        self._watch: asyncio.Task | None = None
        self._on_backend_event: BackendEvent | None = None
        self.note = ""  # what the dashboard should say once connected (a namespace it chose)

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
        """Start what is needed and check the key; raises on failure with a readable message.

        The embedded backend takes the profile's key when it has one (SPYGLASS_API_KEY, or a key
        saved in the profile), else this machine's local account; stream, trends and geonet URLs
        that the profile names are used as they are."""
        if self.profile.embedded:
            from spyglass.local.launcher import EmbeddedBackend

            started, self._started = self._started, None
            if started is not None and started.profile is not None:
                self.backend = started  # started before the dashboard loaded Textual
            else:
                self.backend = EmbeddedBackend.for_profile(self.requested, self.data)
                await asyncio.to_thread(self.backend.start)
            await self.backend.wait_ready()
            assert self.backend.profile is not None
            self.profile = self.backend.profile  # (another backend's, if that one took the data first)
        if self.clients is None:
            # The client stack loads off the UI thread, after the first screen is up.
            client = await asyncio.to_thread(importlib.import_module, "spyglass.client")
            self.clients = client.Clients.from_profile(self.profile)
        from spyglass.client.errors import AuthenticationError

        try:
            info = await self.clients.account.api_info()
        except AuthenticationError as exc:
            raise KeyRefused(self.refusal(exc)) from None
        if not self.profile.embedded:
            await self._check_namespace()
        return info

    async def _check_namespace(self) -> None:
        """A server whose methods are under another namespace (the original service's is ``shodan``)
        is used under that one for this session, and the note says what to set; a server with none
        known is said at once rather than as a 404 on every pane."""
        assert self.clients is not None
        found = await self.clients.find_namespace()
        wanted = self.profile.namespace
        if found is None:
            raise ConnectionError(
                f"{self.profile.url} has no /{wanted}/ methods: is it a spyglass or original-service API?"
            )
        if found != wanted:
            await self.clients.aclose()
            self.profile = self.profile.replace(namespace=found)
            client = importlib.import_module("spyglass.client")
            self.clients = client.Clients.from_profile(self.profile)
            self.note = (
                f"This server's methods are under /{found}/, not /{wanted}/: using /{found}/ "
                f"(set SPYGLASS_NAMESPACE={found} or the profile's namespace to say so)"
            )

    def refusal(self, exc: Exception) -> str:
        """Which key, which profile and which server: what a person needs to fix a refused key."""
        source = " (the key comes from SPYGLASS_API_KEY)" if os.environ.get(ENV_KEY) == self.requested.key else ""
        return f"the key of profile {self.requested.name} was refused by {self.profile.url}: {exc}{source}"

    # -- the embedded backend's watch ----------------------------------------------------------
    def watch_backend(self, on_event: BackendEvent) -> asyncio.Task | None:
        """Watch the embedded backend from now on (a task on the running loop, not a worker).

        When it exits for any reason the dashboard did not ask for, it is reaped, ``on_event("died",
        why)`` is called, it starts again on the same data (on a new port, so the profile's URL changes)
        and ``on_event("restarted", where)`` follows once it answers: the caller then reconnects.
        After MAX_QUICK_EXITS exits in a row of a backend it started, each soon after its start,
        ``on_event("failed", why)`` and the watch ends (another dashboard's ending never counts).
        Without an embedded backend this does nothing; called again, it keeps the running watch and
        reports to the new ``on_event``."""
        self._on_backend_event = on_event
        if self.backend is None:
            return None
        if self._watch is None or self._watch.done():
            self._watch = asyncio.get_running_loop().create_task(self._watch_backend(), name="backend-watch")
        return self._watch

    def _report(self, kind: str, message: str) -> None:
        if self._on_backend_event is not None:
            self._on_backend_event(kind, message)

    async def _watch_backend(self) -> None:
        from spyglass.local.datalock import served_by
        from spyglass.local.launcher import BackendFailed, exit_reason

        loop = asyncio.get_running_loop()
        started, quick_exits = loop.time(), 0
        while (backend := self.backend) is not None:
            await asyncio.sleep(POLL_INTERVAL)
            if backend.log_is_full():
                await asyncio.to_thread(backend.rotate_log)
            if backend.attached:  # another dashboard's backend: gone once nothing holds the data
                if await asyncio.to_thread(served_by, backend.data_dir) is not None:
                    continue
                reason = "the shared backend stopped"
                # Its dashboard quit, or it died: either way no start of this one failed. Counted, a
                # few quits among four dashboards (each taking over from the last) gave up for good
                # on a backend that would have started (newcomer trial 11). One started here that
                # dies is counted, as it should be.
                quick_exits = 0
            else:
                process = backend.process
                code = process.poll() if process is not None else None  # poll() reaps a dead backend
                if code is None:
                    continue
                reason = exit_reason(code)
                quick_exits = quick_exits + 1 if loop.time() - started < QUICK_EXIT else 1
            if quick_exits > MAX_QUICK_EXITS:
                self._report(
                    "failed",
                    f"embedded backend exited ({reason}) soon after each of {MAX_QUICK_EXITS} "
                    f"restarts; not restarting it: see {backend.log_path} (ctrl+r to retry)",
                )
                return
            self._report("died", f"embedded backend exited ({reason}); restarting")
            await asyncio.sleep(max(0, quick_exits - 1))  # at once the first time, then back off a little
            started = loop.time()
            try:
                await self._restart(backend)
            except BackendFailed:
                continue  # it died again while starting: the next round counts it
            except Exception as exc:  # the data dir or the port is gone: say so rather than die silently
                self._report("failed", f"embedded backend could not be restarted: {exc} (ctrl+r to retry)")
                return
            self._report("restarted", f"embedded backend restarted at {self.profile.url}")

    async def _restart(self, backend: EmbeddedBackend) -> None:
        for retired in self._retired:  # the caller moved off these at the previous restart
            await retired.aclose()
        # The dead backend's clients stay open (failing to connect) until the caller has moved to
        # new ones: a closed client would raise where a dead server only fails a call.
        self._retired = [self.clients] if self.clients is not None else []
        self.clients = None
        await asyncio.to_thread(backend.restart)
        await backend.wait_ready()
        assert backend.profile is not None
        self.profile = backend.profile  # (another backend's, if that one took the data first)

    async def close(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None and watch is not asyncio.current_task():
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch
        clients, self.clients = self.clients, None
        for each in [*self._retired, clients]:
            if each is not None:
                await each.aclose()
        self._retired = []
        for backend in (self.backend, self._started):
            if backend is not None:
                await asyncio.to_thread(backend.stop)
        self.backend = self._started = None
