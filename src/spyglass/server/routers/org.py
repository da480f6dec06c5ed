"""The organization (enterprise): ``/org``, ``PUT`` and ``DELETE /org/member/{user}``.

An enterprise account comes with an organization of which it is the admin (created on first
use). Its admins add and remove members: existing accounts, by username or e-mail address;
``notify`` e-mails the new member through the configured SMTP server (``serve --smtp``).
"""

from __future__ import annotations

import smtplib
from typing import Any

from fastapi import APIRouter, Depends, Request

from spyglass import models as m
from spyglass.server import mail
from spyglass.server.auth import Caller, caller
from spyglass.server.errors import ApiError, ErrorBody, bad_request, not_found, responses
from spyglass.server.store import Account, AmbiguousUser, Organization, Store

router = APIRouter()

WHAT = "The organization"
MAIL_ERRORS: dict[int | str, dict[str, Any]] = {
    501: {"model": ErrorBody, "description": "notify: no SMTP server is configured; nothing was done"},
    503: {"model": ErrorBody, "description": "notify: the SMTP server failed; nothing was done"},
}


def person(a: Account) -> m.OrgUser:
    return m.OrgUser(username=a.username, email=a.email)


def body(org: Organization) -> m.Organization:
    return m.Organization(
        id=org.id,
        name=org.name,
        created=org.created,
        upgrade_type=org.upgrade_type,
        admins=[person(a) for a in org.admins],
        members=[person(a) for a in org.members],
        domains=org.domains,
        logo=org.logo,
    )


def administered(who: Caller, action: str) -> Organization:
    """The caller's organization, if the caller is one of its admins."""
    who.require_enterprise(WHAT)
    org = who.store.own_organization(who.account)
    if org.role_of(who.account.id) != "admin":
        raise ApiError(403, f"Only an admin of the organization {org.name} may {action}")
    return org


def existing_user(store: Store, user: str) -> Account:
    try:
        account = store.find_account(user)
    except AmbiguousUser as exc:
        raise bad_request(str(exc)) from None
    if account is None:
        raise not_found(f"No user with the username or e-mail address {user}")
    return account


async def notify_member(server: tuple[str, int] | None, account: Account, org: Organization, admin: Account) -> None:
    if not account.email:
        raise bad_request(f"{account.username} has no e-mail address to notify: add them without notify")
    if server is None:
        raise ApiError(501, f"{mail.NO_SMTP}: the notification cannot be sent")
    note = mail.message(
        account.email,
        f"{admin.username} added you to the organization {org.name}",
        f"{admin.username} added you ({account.username}) to the organization {org.name} on spyglass.\n",
    )
    try:
        await mail.send(server, note)
    except (OSError, smtplib.SMTPException) as exc:
        raise ApiError(
            503, f"The notification e-mail to {account.email} failed, so {account.username} was not added: {exc}"
        ) from None


@router.get("/org", response_model=m.Organization, responses=responses(403))
def organization(who: Caller = Depends(caller)) -> m.Organization:
    who.require_enterprise(WHAT)
    return body(who.store.own_organization(who.account))


@router.put("/org/member/{user}", response_model=m.Success, responses={**responses(403, 404), **MAIL_ERRORS})
async def add_member(request: Request, user: str, notify: bool = False, who: Caller = Depends(caller)) -> m.Success:
    org = administered(who, "add members")
    account = existing_user(who.store, user)
    role = org.role_of(account.id)
    if role is not None:
        raise bad_request(
            f"{account.username} is already {'an admin' if role == 'admin' else 'a member'} of {org.name}"
        )
    if who.store.organization_of(account.id) is not None:
        raise bad_request(f"{account.username} already belongs to another organization")
    if notify:
        # Sent before the member is added: a failed e-mail leaves nothing done, so the call can
        # simply be repeated.
        await notify_member(request.app.state.settings.smtp_server, account, org, who.account)
    if not who.store.add_member(org.id, account.id):
        raise bad_request(f"{account.username} already belongs to another organization")  # joined meanwhile
    return m.Success(success=True)


@router.delete("/org/member/{user}", response_model=m.Success, responses=responses(403, 404))
def remove_member(user: str, who: Caller = Depends(caller)) -> m.Success:
    org = administered(who, "remove members")
    account = existing_user(who.store, user)
    if org.role_of(account.id) == "admin":
        raise bad_request(f"{account.username} is an admin of {org.name}: admins cannot be removed")
    if not who.store.remove_member(org.id, account.id):
        raise not_found(f"{account.username} is not a member of {org.name}")
    return m.Success(success=True)
