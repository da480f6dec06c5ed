"""The rules of alerts that are not the HTTP layer's: how many addresses an account's plan lets
its alerts monitor, and whether an alert notifies (and if not, why). The routers ask these and
say the answers in HTTP terms."""

from __future__ import annotations

from datetime import datetime

from spyglass.netblocks import Network, network_size
from spyglass.server.alerts.rows import AlertRow
from spyglass.server.state.alerts import AlertState
from spyglass.server.store import Account

NOTIFYING = "notifying"


class OverPlan(Exception):
    """The alerts would monitor more addresses than the account's plan allows (the message says so)."""


def check_plan(alerts: AlertState, account: Account, networks: list[Network], leaving_out: str | None = None) -> None:
    """OverPlan if ``networks``, beside what the account's other alerts monitor (all of them but
    ``leaving_out``, the alert being changed), are more addresses than the plan allows."""
    plan = account.plan
    size = network_size(networks)
    in_use = alerts.monitored(account.id, leaving_out)
    if size + in_use > plan.monitored_ips:
        raise OverPlan(
            f"The alert would monitor {size} IPs and {in_use} are monitored already: "
            f"the {plan.name} plan allows {plan.monitored_ips} monitored IPs"
        )


def notify_reason(alert: AlertRow, now: datetime, notifiers: int) -> str:
    """:data:`NOTIFYING`, or why the alert sends nothing; ``notifiers``: how many it has attached."""
    if alert.expired(now):
        return "expired"
    if not alert.triggers:
        return "no trigger enabled"
    if not notifiers:
        return "no notifier attached"
    return NOTIFYING
