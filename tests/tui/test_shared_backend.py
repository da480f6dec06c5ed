"""One backend per data directory: a second dashboard on the same data attaches to the first
one's backend (and starts its own once that one is gone); a second serve says why it cannot."""

from __future__ import annotations

import subprocess
import sys

import pytest

from spyglass.config import Profile
from spyglass.local.datalock import served_by
from spyglass.tui.connection import Connection
from tests.tui.test_backend_death import Events

pytestmark = pytest.mark.external  # the dashboard's backend as a process


async def test_a_second_dashboard_attaches_and_takes_over_when_the_first_quits(tmp_path):
    first, second = Connection(Profile(), data=tmp_path), Connection(Profile(), data=tmp_path)
    try:
        await first.open()
        await second.open()
        assert first.backend is not None and second.backend is not None
        assert second.backend.attached and second.backend.process is None
        assert second.profile.url == first.profile.url == served_by(tmp_path).url
        assert (await second.clients.search.count("port:22")).total > 0  # the demo data, served once
        events = Events()
        second.watch_backend(events)
        await first.close()  # the first dashboard quits: its backend goes
        await events.wait_for("restarted")
        assert not second.backend.attached and second.backend.process is not None
        assert served_by(tmp_path).url == second.profile.url
        await second.open()
        assert (await second.clients.search.count("port:22")).total > 0
    finally:
        await first.close()
        await second.close()
    assert served_by(tmp_path) is None


async def test_a_second_serve_on_the_same_data_says_which_backend_holds_it(tmp_path):
    connection = Connection(Profile(), data=tmp_path)
    try:
        await connection.open()
        out = subprocess.run(
            [sys.executable, "-m", "spyglass", "serve", "--port", "0", "--data", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode != 0
        assert f"is served already, by the backend at {connection.profile.url}" in out.stderr
    finally:
        await connection.close()


async def test_quitting_while_another_dashboard_follows_the_stream_stops_the_backend_cleanly(tmp_path):
    import asyncio

    from spyglass.client import Clients

    owner = Connection(Profile(), data=tmp_path)
    await owner.open()
    other = Clients.from_profile(owner.profile)  # another dashboard, attached, following the stream
    following = asyncio.Event()

    async def follow() -> None:
        def state(s) -> None:
            if s.status == "connected":
                following.set()

        async for _ in other.stream.banners(raw=True, on_state=state):
            pass

    task = asyncio.create_task(follow())
    try:
        await asyncio.wait_for(following.wait(), 60)
        await owner.close()  # the owner quits: its backend stops with the stream still open
        log = (tmp_path / "backend.log").read_text()
        assert "Traceback" not in log and "CancelledError" not in log, log[-2000:]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await other.aclose()
        await owner.close()


async def test_a_dashboard_that_loses_the_race_for_the_data_attaches_to_the_backend_that_won(tmp_path, monkeypatch):
    import asyncio

    from spyglass.local import launcher

    first = Connection(Profile(), data=tmp_path)
    await first.open()
    loser = launcher.EmbeddedBackend(tmp_path)
    try:
        # It looked before the winner held the data (two dashboards restart at once after a handover):
        monkeypatch.setattr(launcher, "served_by", lambda data_dir: None)
        await asyncio.to_thread(loser.start)
        monkeypatch.undo()
        assert loser.process is not None  # its own backend, which finds the data served and exits
        await loser.wait_ready()  # not a failure: the data is served, by the winner
        assert loser.attached and loser.process is None
        assert loser.profile is not None and loser.profile.url == first.profile.url
    finally:
        await asyncio.to_thread(loser.stop)
        await first.close()


async def test_a_dashboard_attached_as_the_backend_it_found_quits_starts_its_own(tmp_path):
    """Newcomer trial 7: a dashboard started as another quit attached to the backend that still
    held the data, then waited 30 s at "starting backend" on a URL nobody answered."""
    import asyncio

    from spyglass.local import launcher

    first = Connection(Profile(), data=tmp_path)
    await first.open()
    late = launcher.EmbeddedBackend(tmp_path)
    try:
        await asyncio.to_thread(late.start)
        assert late.attached and late.profile is not None and late.profile.url == first.profile.url
        await first.close()  # the first dashboard quits before the late one has been answered
        await late.wait_ready(timeout=120)
        assert not late.attached and late.process is not None
        assert served_by(tmp_path).url == late.profile.url != first.profile.url
    finally:
        await asyncio.to_thread(late.stop)
        await first.close()


async def test_an_attached_dashboard_follows_any_number_of_owners_quitting(tmp_path, monkeypatch):
    """Newcomer trial 11, major: four dashboards on one data dir, the owner's backend killed twice
    and stopped once, then the owner quit: two of them said "exited soon after each of 3 restarts;
    not restarting it" though nothing of theirs had failed, each other dashboard's end counted as a
    crash. Here each time the shared backend goes, another dashboard takes the data first; the
    attached one follows each, MAX_QUICK_EXITS + 1 times within seconds, and never gives up."""
    from spyglass.tui.connection import MAX_QUICK_EXITS

    watched = Connection(Profile(), data=tmp_path)
    owners = [Connection(Profile(), data=tmp_path)]
    restart = Connection._restart

    async def another_takes_over_first(self, backend):
        if self is watched:
            owner = Connection(Profile(), data=tmp_path)  # a dashboard started meanwhile: it wins the data
            await owner.open()
            owners.append(owner)
        await restart(self, backend)

    monkeypatch.setattr(Connection, "_restart", another_takes_over_first)
    try:
        await owners[0].open()
        await watched.open()
        events = Events()
        watched.watch_backend(events)
        for turn in range(MAX_QUICK_EXITS + 1):
            assert watched.backend.attached and watched.profile.url == owners[-1].profile.url
            await owners[-1].close()  # the owner quits: its backend goes
            await events.wait_for("restarted", turn + 1)  # (before the fix: "failed", and no more)
        assert "failed" not in [kind for kind, _ in events.seen]
        assert watched.backend.attached and served_by(tmp_path).url == watched.profile.url == owners[-1].profile.url
        await watched.open()
        assert (await watched.clients.search.count("port:22")).total > 0
    finally:
        await watched.close()
        for owner in owners:
            await owner.close()
    assert served_by(tmp_path) is None
