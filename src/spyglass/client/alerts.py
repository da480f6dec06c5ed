"""Network alerts (``/{ns}/alert...``)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from spyglass import models as m
from spyglass.client.base import HostClient, csv, segment


class AlertsClient(HostClient):
    """Monitored networks, their triggers, ignored services and notifiers."""

    async def create(self, name: str, ips: Sequence[str], expires: int | None = None) -> m.Alert:
        body: dict = {"name": name, "filters": {"ip": builtins.list(ips)}}
        if expires is not None:
            body["expires"] = expires
        return await self.call(m.Alert, "POST", self.ns("/alert"), json=body)

    async def get(self, alert_id: str) -> m.Alert:
        return await self.call(m.Alert, "GET", self.ns(f"/alert/{segment(alert_id)}/info"))

    async def update(self, alert_id: str, ips: Sequence[str], expires: int | None = None) -> m.Alert:
        # Replaces the monitored networks (and the expiry, seconds after creation, if given; 0: never):
        # repeating it changes nothing.
        body: dict = {"filters": {"ip": builtins.list(ips)}}
        if expires is not None:
            body["expires"] = expires
        return await self.call(m.Alert, "POST", self.ns(f"/alert/{segment(alert_id)}"), json=body, idempotent=True)

    async def delete(self, alert_id: str) -> bool:
        return await self.success("DELETE", self.ns(f"/alert/{segment(alert_id)}"))

    async def triggers(self) -> builtins.list[m.Trigger]:
        return await self.call(builtins.list[m.Trigger], "GET", self.ns("/alert/triggers"))

    async def enable_triggers(self, alert_id: str, triggers: str | Sequence[str]) -> bool:
        return await self.success("PUT", self.ns(f"/alert/{segment(alert_id)}/trigger/{segment(csv(triggers))}"))

    async def disable_triggers(self, alert_id: str, triggers: str | Sequence[str]) -> bool:
        return await self.success("DELETE", self.ns(f"/alert/{segment(alert_id)}/trigger/{segment(csv(triggers))}"))

    async def ignore_service(self, alert_id: str, trigger: str, service: str) -> bool:
        path = f"/alert/{segment(alert_id)}/trigger/{segment(trigger)}/ignore/{segment(service)}"
        return await self.success("PUT", self.ns(path))

    async def unignore_service(self, alert_id: str, trigger: str, service: str) -> bool:
        path = f"/alert/{segment(alert_id)}/trigger/{segment(trigger)}/ignore/{segment(service)}"
        return await self.success("DELETE", self.ns(path))

    async def add_notifier(self, alert_id: str, notifier_id: str) -> m.Attached:
        """Attached; its ``warning`` says when the notifier cannot deliver (an e-mail one with no 'to')."""
        path = f"/alert/{segment(alert_id)}/notifier/{segment(notifier_id)}"
        return await self.call(m.Attached, "PUT", self.ns(path))

    async def remove_notifier(self, alert_id: str, notifier_id: str) -> bool:
        return await self.success("DELETE", self.ns(f"/alert/{segment(alert_id)}/notifier/{segment(notifier_id)}"))

    async def list(self) -> builtins.list[m.Alert]:
        return await self.call(builtins.list[m.Alert], "GET", self.ns("/alert/info"))

    async def notifications(self, alert_id: str, limit: int | None = None) -> builtins.list[m.Notification]:
        """The alert's recent delivery attempts, newest first (when, which notifier, outcome); the
        server's 50 unless ``limit`` says how many."""
        params = {} if limit is None else {"limit": limit}
        return await self.call(
            builtins.list[m.Notification], "GET", self.ns(f"/alert/{segment(alert_id)}/notifications"), params=params
        )
