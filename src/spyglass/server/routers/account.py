"""Account and plan: ``/account/profile`` and ``/api-info``."""

from __future__ import annotations

from fastapi import APIRouter

from spyglass.models import AccountProfile, ApiInfo, UsageLimits
from spyglass.server.auth import Caller
from spyglass.server.deps import Accounts, Who
from spyglass.server.state.accounts import Account

router = APIRouter()


def balances(accounts: Accounts, who: Caller) -> Account:
    """The caller's account as the state has it now: the key check may hold balances a few seconds
    old, and these routes are where a client reads its credits."""
    who.account = accounts.account(who.account.id)
    return who.account


@router.get("/account/profile", response_model=AccountProfile, response_model_exclude_unset=True)
def account_profile(accounts: Accounts, who: Who) -> AccountProfile:
    a = balances(accounts, who)
    return AccountProfile(member=a.plan.paid, credits=a.query_credits, display_name=a.display_name, created=a.created)


@router.get("/api-info", response_model=ApiInfo, response_model_exclude_unset=True)
def api_info(accounts: Accounts, who: Who) -> ApiInfo:
    a = balances(accounts, who)
    plan = a.plan
    return ApiInfo(
        plan=plan.name,
        scan_credits=a.scan_credits,
        query_credits=a.query_credits,
        monitored_ips=plan.monitored_ips,
        unlocked_left=a.query_credits,
        usage_limits=UsageLimits(
            scan_credits=plan.scan_credits, query_credits=plan.query_credits, monitored_ips=plan.monitored_ips
        ),
        https=plan.https,
        unlocked=plan.paid,
        telnet=plan.telnet,
    )
