"""The rules of alerts outside HTTP (server/alerts/service.py): the plan's monitored addresses,
and why an alert notifies or not."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from spyglass.netblocks import network_size, parse_networks
from spyglass.server.alerts.providers import cannot_deliver
from spyglass.server.alerts.service import NOTIFYING, notify_reason, over_plan
from spyglass.server.state import OverBudget
from spyglass.server.state.sqlite.accounts import Store
from spyglass.server.state.sqlite.alerts import AlertStore


def test_the_plan_counts_the_other_alerts_but_not_the_one_being_changed(tmp_path):
    accounts, alerts = Store(tmp_path), AlertStore(tmp_path)
    account, _ = accounts.create_account("member", "member")  # 16 monitored addresses
    first = alerts.create_alert(account.id, "first", parse_networks(["127.0.0.0/29"]), 0, budget=16)  # 8
    alerts.create_alert(account.id, "second", parse_networks(["127.0.1.0/30"]), 0, budget=16)  # 8 + 4
    nine = parse_networks(["127.0.1.0/29", "127.0.2.1"])
    with pytest.raises(OverBudget) as over:
        alerts.create_alert(account.id, "third", nine, 0, budget=16)
    message = "monitor 9 IPs and 12 are monitored already: the member plan allows 16"
    assert message in over_plan(account, network_size(nine), over.value) and len(alerts.alerts(account.id)) == 2
    alerts.set_networks(account.id, first.id, parse_networks(["127.0.3.0/29"]), budget=16)  # its own 8 not counted
    with pytest.raises(OverBudget):  # 16 in its place, beside the other's 4
        alerts.set_networks(account.id, first.id, parse_networks(["127.0.0.0/28"]), budget=16)
    other, _ = accounts.create_account("other", "member")
    alerts.create_alert(other.id, "o", parse_networks(["127.0.0.0/28"]), 0, budget=16)  # not the first's alerts
    alerts.close()
    accounts.close()


def test_an_alert_notifies_only_unexpired_with_a_trigger_and_a_notifier(tmp_path):
    alerts = AlertStore(tmp_path)
    alert = alerts.create_alert(1, "lab", parse_networks(["127.0.0.1"]), 60)
    now = datetime.fromisoformat(alert.created)
    assert notify_reason(alert, now, notifiers=1) == "no trigger enabled"
    alerts.set_triggers(alert.id, ["any"], True)
    alert = alerts.alert(1, alert.id)
    assert alert is not None
    assert notify_reason(alert, now, notifiers=0) == "no notifier attached"
    assert notify_reason(alert, now, notifiers=1) == NOTIFYING
    assert notify_reason(alert, now + timedelta(seconds=60), notifiers=1) == "expired"
    alerts.close()


def test_an_alert_whose_notifiers_cannot_deliver_says_so_rather_than_notifying(tmp_path):
    alerts = AlertStore(tmp_path)
    alert = alerts.create_alert(1, "lab", parse_networks(["127.0.0.1"]), 0)
    alerts.set_triggers(alert.id, ["any"], True)
    alert = alerts.alert(1, alert.id)
    assert alert is not None
    now = datetime.fromisoformat(alert.created)
    no_to = cannot_deliver("email", {"to": ""})
    assert no_to == "no e-mail address: set the notifier's 'to'"
    assert cannot_deliver("email", {"to": "a@example.test"}) is None
    assert cannot_deliver("webhook", {"url": " "}) == "no url: set the notifier's 'url'"
    assert notify_reason(alert, now, 1, [f"default: {no_to}"]) == f"notifier failing: default: {no_to}"
    assert notify_reason(alert, now, 2, [f"default: {no_to}"]) == (
        f"{NOTIFYING} (1 of 2 notifiers failing: default: {no_to})"
    )
    alerts.close()
