"""The alert watch outlives a reading that fails for now: it said no alert again until the
dashboard reconnected (newcomer trial)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from spyglass.client.errors import NotFound, RateLimited
from spyglass.tui import alertnotices
from spyglass.tui.alertnotices import NoticeWatch


class FlakyAlerts:
    """One alert whose log is refused (429) once after the first reading, then holds a new event."""

    def __init__(self) -> None:
        self.alert = SimpleNamespace(id="A1", name="office", filters=SimpleNamespace(ip=["127.0.0.0/24"]))
        self.readings = 0

    async def list(self):
        return [self.alert]

    async def notifications(self, alert_id):
        self.readings += 1
        if self.readings == 2:
            raise RateLimited("Too many requests of this account at once")
        if self.readings == 1:
            return []
        return [SimpleNamespace(event="e1", triggers=["any"], service="127.0.0.1:80")]


class NoStream:
    async def alert(self):
        raise NotFound("no alert stream for this key")
        yield  # an async generator


async def test_a_refused_reading_is_tried_again_and_what_fired_is_said(monkeypatch):
    monkeypatch.setattr(alertnotices, "POLL_EVERY", 0.01)
    said: list = []
    alerts = FlakyAlerts()
    watch = NoticeWatch(SimpleNamespace(alerts=alerts, stream=NoStream()), lambda notices: said.extend(notices))
    running = asyncio.create_task(watch.run())
    try:
        async with asyncio.timeout(30):
            while not said:
                assert not running.done(), f"the watch ended: {running.exception()!r}"
                await asyncio.sleep(0.01)
    finally:
        running.cancel()
    assert alerts.readings >= 3 and said[0].text().startswith("office")
