"""The rules of alerts that are not the HTTP layer's: how many addresses an account's plan lets
its alerts monitor, and whether an alert notifies (and if not, why). The routers ask these and
say the answers in HTTP terms."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from spyglass.server.state import OverBudget
from spyglass.server.state.accounts import Account
from spyglass.server.state.alertrows import AlertRow

NOTIFYING = "notifying"


def over_plan(account: Account, size: int, over: OverBudget) -> str:
    """Why the state refused networks of ``size`` addresses beside the account's other alerts (``over``): the state
    checks the plan's budget and writes in one transaction, so concurrent creates on any number
    of backends never pass it."""
    plan = account.plan
    return (
        f"The alert would monitor {size:,} IPs and {over.in_use:,} are monitored already: "
        f"the {plan.name} plan allows {plan.monitored_ips:,} monitored IPs"
    )


def notify_reason(alert: AlertRow, now: datetime, notifiers: int, failing: Sequence[str] = ()) -> str:
    """:data:`NOTIFYING` (followed by which notifiers fail, if some do), or why the alert sends
    nothing; ``notifiers``: how many it has attached, ``failing``: why each of those that cannot
    deliver cannot."""
    if alert.expired(now):
        return "expired"
    if not alert.triggers:
        return "no trigger enabled"
    if not notifiers:
        return "no notifier attached"
    if failing and len(failing) >= notifiers:
        return f"notifier failing: {'; '.join(failing)}"
    if failing:
        return f"{NOTIFYING} ({len(failing)} of {notifiers} notifiers failing: {'; '.join(failing)})"
    return NOTIFYING
