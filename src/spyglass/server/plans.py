"""API plans: monthly allowances and which methods each plan may call."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Plan:
    name: str
    query_credits: int
    scan_credits: int
    monitored_ips: int
    scan_ips: int  # the most addresses one on-demand scan may cover (a /24 is 256)
    paid: bool  # on-demand scans need a paid plan
    enterprise: bool  # stream, trends, bulk data and organization methods
    https: bool
    telnet: bool


PLANS: dict[str, Plan] = {
    p.name: p
    for p in (
        Plan(
            "free",
            query_credits=0,
            scan_credits=0,
            monitored_ips=0,
            scan_ips=0,
            paid=False,
            enterprise=False,
            https=False,
            telnet=False,
        ),
        Plan(
            "member",
            query_credits=100,
            scan_credits=100,
            monitored_ips=16,
            scan_ips=256,
            paid=True,
            enterprise=False,
            https=True,
            telnet=False,
        ),
        Plan(
            "enterprise",
            query_credits=1_000_000,
            scan_credits=65_536,
            monitored_ips=131_072,
            scan_ips=65_536,
            paid=True,
            enterprise=True,
            https=True,
            telnet=True,
        ),
    )
}
