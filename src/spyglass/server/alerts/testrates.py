"""How many notifier tests an account, and one destination, may ask for an hour.

A test sends at once, to any address the account typed: unbounded, a free key mailed 2,323
messages in 20 s to an outside address through the operator's SMTP server. As with invitation
e-mails (routers/org.py), each account and each destination has a bucket of the plan's
``notifier_tests`` given back over an hour; a destination's bucket is shared by every account, so
many accounts cannot multiply it. A URL the account gave counts by the address and port it is
sent to, once looked up (:meth:`TestRates.check_contacted`, just before sending): its host's
spellings (``localhost``, ``LOCALHOST``, ``localhost.``, ``127.0.0.1``, ``2130706433``) each had a
budget of their own when it counted by the URL's text. Kept by each backend, as the invitations' are."""

from __future__ import annotations

from urllib.parse import urlsplit

from spyglass.server.auth import Hourly
from spyglass.server.plans import Plan
from spyglass.server.state.alertrows import NotifierRow


class OverTestRate(Exception):
    """No test now (the message says which cap); ``wait``: seconds until one may be tried."""

    def __init__(self, message: str, wait: float) -> None:
        super().__init__(message)
        self.wait = wait


def destination(notifier: NotifierRow) -> str:
    """Where a notifier's messages go, spelled one way: an e-mail address in lower case without
    its +tag, a URL's host and port, else the provider's arguments."""
    parts = [notifier.provider]
    for name, value in sorted(notifier.args.items()):
        value = value.strip().lower()
        if name == "to" and "@" in value:
            local, _, domain = value.rpartition("@")
            value = f"{local.split('+')[0]}@{domain}"
        elif value.startswith(("http://", "https://")):
            value = urlsplit(value).netloc.rpartition("@")[2]
        elif name == "token":
            continue  # a credential, not a place
        parts.append(value)
    return "\x00".join(parts)


class TestRates:
    def __init__(self) -> None:
        self._hourly = Hourly()

    def check(self, notifier: NotifierRow, plan: Plan, *, by_address: bool = False) -> None:
        """Spend one test of the notifier's account and of its destination, or OverTestRate.
        ``by_address``: the destination is counted later, by :meth:`check_contacted`."""
        per_hour = plan.notifier_tests
        if (wait := self._hourly.spend(f"account {notifier.account_id}", per_hour)) is not None:
            raise OverTestRate(f"Too many notifier tests from this account: {_cap(plan)}", wait)
        if not by_address:
            self._spend_destination(destination(notifier), plan)

    def check_contacted(self, address: str, plan: Plan) -> None:
        """Spend one test of the address (and port) a URL's test is about to be sent to."""
        self._spend_destination(f"address {address}", plan)

    def _spend_destination(self, where: str, plan: Plan) -> None:
        if (wait := self._hourly.spend(f"to {where}", plan.notifier_tests)) is not None:
            raise OverTestRate(f"Too many notifier tests to this destination, from any account: {_cap(plan)}", wait)


def _cap(plan: Plan) -> str:
    return f"the {plan.name} plan allows {plan.notifier_tests} notifier tests an hour"
