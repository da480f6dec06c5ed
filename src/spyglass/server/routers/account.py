"""Account and plan: ``/account/profile`` and ``/api-info``."""

from __future__ import annotations

from fastapi import APIRouter

from spyglass.models import AccountProfile, ApiInfo, UsageLimits
from spyglass.server.deps import Keys, Who

router = APIRouter()
# Both read the balances afresh (the key check may hold them a few seconds old): a client reads its credits here.


@router.get("/account/profile", response_model=AccountProfile, response_model_exclude_unset=True)
def account_profile(keys: Keys, who: Who) -> AccountProfile:
    a = who.refresh(keys)
    return AccountProfile(member=a.plan.paid, credits=a.query_credits, display_name=a.display_name, created=a.created)


@router.get("/api-info", response_model=ApiInfo, response_model_exclude_unset=True)
def api_info(keys: Keys, who: Who) -> ApiInfo:
    a = who.refresh(keys)
    plan = a.plan
    return ApiInfo(
        plan=plan.name,
        scan_credits=a.scan_credits,
        query_credits=a.query_credits,
        monitored_ips=plan.monitored_ips,
        unlocked_left=a.query_credits,
        usage_limits=UsageLimits(**{name: getattr(plan, name) for name in UsageLimits.model_fields}),
        https=plan.https,
        unlocked=plan.paid,
        telnet=plan.telnet,
    )
