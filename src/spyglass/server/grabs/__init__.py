"""One small module per protocol. Each ``grab(target)`` returns a Found or None (not that
protocol), raises base.Closed when the port cannot be reached, and never raises for what a
service sends. ``generic`` has no grab: the probe feeds it what the port said."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from . import ftp, http, https, redis, smtp, ssh
from .base import Found, Target

GRABBERS: dict[str, Callable[[Target], Awaitable[Found | None]]] = {
    "http": http.grab,
    "https": https.grab,
    "ssh": ssh.grab,
    "ftp": ftp.grab,
    "smtp": smtp.grab,
    "redis": redis.grab,
}
