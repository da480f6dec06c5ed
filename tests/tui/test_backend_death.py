"""The embedded backend dies (kill -9, SIGTERM): the dashboard says so, reaps it, starts it again on the
same data and reconnects; a backend that keeps dying is given up on, with a message."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from spyglass.config import Profile
from spyglass.tui.app import SpyglassApp
from spyglass.tui.connection import MAX_QUICK_EXITS, Connection, State
from spyglass.tui.widgets.statusbar import StatusBar
from tests.tui.helpers import settle

pytestmark = pytest.mark.external  # the dashboard's backend as a process


def is_zombie_or_alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:" in status  # still a process table entry: running, or a zombie nobody reaped


class Events:
    """What the watch reports, and a way to wait for the next kind without assuming how long it takes."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self.changed = asyncio.Event()

    def __call__(self, kind: str, message: str) -> None:
        self.seen.append((kind, message))
        self.changed.set()

    async def wait_for(self, kind: str, count: int = 1, timeout: float = 60.0) -> str:
        async with asyncio.timeout(timeout):
            while sum(k == kind for k, _ in self.seen) < count:
                self.changed.clear()
                await self.changed.wait()
        return [m for k, m in self.seen if k == kind][count - 1]


@pytest.mark.parametrize(("sig", "reason"), [(signal.SIGKILL, "signal 9"), (signal.SIGTERM, "signal 15")])
async def test_a_dead_backend_is_reaped_restarted_and_reachable_again(tmp_path, sig, reason):
    connection = Connection(Profile(), data=tmp_path)
    try:
        await connection.open()
        events = Events()
        connection.watch_backend(events)
        first_url, old_pid = connection.profile.url, connection.backend.process.pid
        os.kill(old_pid, sig)

        died = await events.wait_for("died")
        assert died.startswith("embedded backend exited (") and died.endswith("); restarting")
        assert f"({reason})" in died  # uvicorn stops cleanly on SIGTERM, then exits by that signal
        restarted = await events.wait_for("restarted")
        assert not is_zombie_or_alive(old_pid)  # reaped
        new_pid = connection.backend.process.pid
        assert new_pid != old_pid and connection.backend.process.poll() is None
        assert connection.profile.url in restarted and connection.profile.url != first_url
        info = await connection.open()  # what the dashboard does on "restarted"
        assert info.plan and connection.clients is not None
        assert [kind for kind, _ in events.seen] == ["died", "restarted"]
    finally:
        await connection.close()
    assert not is_zombie_or_alive(new_pid)


async def test_a_backend_that_keeps_dying_is_given_up_on(tmp_path):
    """Slow (about 10 s): the backend process starts four times, and the watch backs off 1 s, then
    2 s, between restarts, as it does for a user."""
    connection = Connection(Profile(), data=tmp_path)
    try:
        await connection.open()
        events = Events()
        connection.watch_backend(events)
        pids = []
        for restart in range(MAX_QUICK_EXITS + 1):
            if restart:
                await events.wait_for("restarted", restart)
            pids.append(connection.backend.process.pid)
            os.kill(pids[-1], signal.SIGKILL)
        failed = await events.wait_for("failed")
        assert "exited (signal 9)" in failed and "not restarting" in failed and "backend.log" in failed
        assert [kind for kind, _ in events.seen].count("restarted") == MAX_QUICK_EXITS
        assert not any(is_zombie_or_alive(pid) for pid in pids)
        assert connection._watch.done()
    finally:
        await connection.close()


async def test_the_dashboard_reconnects_after_kill_9(tmp_path, monkeypatch):
    app = SpyglassApp(Profile(), data=tmp_path)
    reports: list[str] = []
    monkeypatch.setattr(app, "report", lambda message, error=True: reports.append(message))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        status = app.query_one(StatusBar)
        assert status.state is State.CONNECTED, status.detail
        old_pid, old_endpoint = app.connection.backend.process.pid, status.endpoint
        os.kill(old_pid, signal.SIGKILL)

        for _ in range(1200):  # bounded: the restart takes what it takes, the loop only waits for it
            await pilot.pause(0.05)
            process = app.connection.backend.process if app.connection.backend else None
            if status.state is State.CONNECTED and process is not None and process.pid != old_pid:
                break
        else:
            raise AssertionError(f"not reconnected: {status.state} {status.detail} {reports}")
        await settle(pilot)
        assert status.state is State.CONNECTED
        assert "embedded backend exited (signal 9); restarting" in reports
        assert any(r.startswith("embedded backend restarted at http://127.0.0.1:") for r in reports)
        assert status.endpoint != old_endpoint and status.endpoint == app.connection.profile.url
        assert app.clients is app.connection.clients
        assert not is_zombie_or_alive(old_pid)
        process = app.connection.backend.process
    assert process.poll() is not None  # quitting still stops the restarted backend


async def test_a_late_failure_of_the_dead_backends_clients_does_not_outlive_the_reconnect(tmp_path, monkeypatch):
    """Issue 45, M4: a call of the clients of the backend that died (one that was retrying while it
    was down) fails after the dashboard has reconnected: the status bar speaks for the clients in use,
    so it stays connected, and a call that succeeds says so even after a failure was shown."""
    app = SpyglassApp(Profile(), data=tmp_path)
    monkeypatch.setattr(app, "report", lambda message, error=True: None)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        status = app.query_one(StatusBar)
        assert status.state is State.CONNECTED, status.detail
        old_clients, old_pid = app.clients, app.connection.backend.process.pid
        os.kill(old_pid, signal.SIGKILL)
        for _ in range(1200):  # bounded: the restart takes what it takes, the loop only waits for it
            await pilot.pause(0.05)
            if status.state is State.CONNECTED and app.clients is not None and app.clients is not old_clients:
                break
        else:
            raise AssertionError(f"not reconnected: {status.state} {status.detail}")
        await settle(pilot)

        from spyglass.client import SpyglassError

        with pytest.raises(SpyglassError):  # the late failure: the dead backend's port refuses
            await old_clients.account.api_info()
        await settle(pilot)
        assert status.state is State.CONNECTED, status.detail

        # A failure shown (the live clients lost the server once), then any call that reaches it clears it.
        app.clients.reachability.lost("a blip")
        assert status.state is State.FAILED
        await app.clients.search.count("port:22")
        assert status.state is State.CONNECTED, status.detail

        # The health check that gets an answer says so too (a refusal it showed is over).
        app.set_state(State.REFUSED, "the key was refused", "ctrl+r retries")
        app.check_health()
        await settle(pilot)
        assert status.state is State.CONNECTED, status.detail
