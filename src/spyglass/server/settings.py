"""The backend's settings: what ``spyglass serve``'s options and the environment decide.

A module of its own, imported by the app factory, the typed dependencies and the command that
builds them, so that none of those imports another for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from spyglass import DEFAULT_NAMESPACE
from spyglass.netools.scantargets import DEFAULT_ALLOWED
from spyglass.server.geonet import GeonetSettings
from spyglass.server.guard import Limits


@dataclass
class Settings:
    data_dir: Path
    namespace: str = DEFAULT_NAMESPACE
    rate_limit: float | None = None  # requests per second per key; None: unlimited
    geonet: GeonetSettings = field(default_factory=GeonetSettings)
    smtp_server: tuple[str, int] | None = None  # (host, port) for e-mail; None: e-mail is not sent
    scan_allow: list[str] = field(default_factory=lambda: list(DEFAULT_ALLOWED))  # networks scans may reach
    scan_concurrency: int = 256  # open connections at once, over all scans
    scan_rate: int = 20_000  # connects a second, over all scans, at most (fewer while the server is busy)
    scan_timeout: float = 5.0  # seconds per connection
    scan_lease: float = 30.0  # seconds a backend holds a scan it runs without renewing (another resumes it after)
    scan_max_ips: int = 65_536  # addresses in one scan, whatever the plan allows
    demo_rate: float = 0.0  # synthetic banners collected per second (the demo collector); 0: none
    notifier_urls: dict[str, str] = field(default_factory=dict)  # provider -> base URL (slack, phone...)
    notifier_allow: list[str] = field(default_factory=list)  # internal networks notifications may reach
    limits: Limits = field(default_factory=Limits)  # connections, timeouts, requests in flight (guard.py)
    forwarded_allow: list[str] = field(default_factory=list)  # proxies whose X-Forwarded-For is believed
    store: str = ""  # the banner store's address (clickhouse://...); "": the embedded store in data_dir
    state: str = ""  # the accounts' address (postgresql://...); "": SQLite in data_dir
    follow_store: bool = False  # stream what the store gains (any backend's banners), not what this one collects
    bulk_data: bool = True  # build the bulk data files; False: list only those already built
    # prepare and write collected banners in a process of their own (serve); False: in this one
    collect_apart: bool = False
