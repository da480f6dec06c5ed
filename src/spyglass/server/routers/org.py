"""The organization (enterprise): ``/org``, ``PUT`` and ``DELETE /org/member/{user}``.

An enterprise account comes with an organization of which it is the admin (created on first
use). Its admins add and remove members: existing accounts, by username or e-mail address;
``notify`` e-mails the new member through the configured SMTP server (``serve --smtp``).
"""

from __future__ import annotations

import logging
import smtplib
from typing import Any

from fastapi import APIRouter, Depends, Request

from spyglass import models as m
from spyglass.server import mail
from spyglass.server.auth import Caller, caller
from spyglass.server.deps import settings_of
from spyglass.server.errors import ApiError, ErrorBody, bad_request, not_found, responses
from spyglass.server.store import Account, AmbiguousUser, Organization

router = APIRouter()
log = logging.getLogger("spyglass.org")

WHAT = "The organization"
MAIL_ERRORS: dict[int | str, dict[str, Any]] = {
    501: {"model": ErrorBody, "description": "notify: no SMTP server is configured; nobody was invited"},
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


async def invite_by_mail(server: tuple[str, int] | None, account: Account, org: Organization, admin: Account) -> None:
    """Best effort: the invitation stands whether the e-mail goes or not (a failure the caller
    saw would tell it that the user exists), and the operator finds failures in the log."""
    assert account.email
    note = mail.message(
        account.email,
        f"{admin.username} invites you to the organization {org.name}",
        f"{admin.username} invites you ({account.username}) to the organization {org.name} on spyglass.\n"
        f"Accept with: spyglass org accept -- {org.id}\n",
    )
    try:
        await mail.send(server, note)
    except (OSError, smtplib.SMTPException) as exc:
        log.warning("the invitation e-mail to %s failed: %s", account.username, exc)


@router.get("/org", response_model=m.Organization, responses=responses(403))
def organization(who: Caller = Depends(caller)) -> m.Organization:
    who.require_enterprise(WHAT)
    return body(who.store.own_organization(who.account))


@router.put("/org/member/{user}", response_model=m.Success, responses={**responses(403), **MAIL_ERRORS})
async def add_member(request: Request, user: str, notify: bool = False, who: Caller = Depends(caller)) -> m.Success:
    """Invite the user: they join when they accept (``/org/invitations``, beyond the seed). The
    answer is the same whether the user exists, can join or not: it tells nobody who has an
    account or where it belongs."""
    org = administered(who, "add members")
    smtp = settings_of(request).smtp_server
    if notify and smtp is None:  # the server's setting, asked before anything about the user
        raise ApiError(501, f"{mail.NO_SMTP}: the invitation e-mail cannot be sent")
    try:
        account = who.store.find_account(user)
    except AmbiguousUser:
        account = None
    if account is None or org.role_of(account.id) is not None or not who.store.invite(org.id, account.id):
        return m.Success(success=True)
    if notify and account.email:
        await invite_by_mail(smtp, account, org, who.account)
    return m.Success(success=True)


@router.get("/org/invitations", response_model=list[m.OrgInvitation], summary="Your pending invitations (spyglass)")
def invitations(who: Caller = Depends(caller)) -> list[m.OrgInvitation]:
    return [m.OrgInvitation(id=i, name=name, invited=when) for i, name, when in who.store.invitations(who.account.id)]


@router.post(
    "/org/invitations/{org_id}",
    response_model=m.Success,
    responses=responses(404),
    summary="Accept an invitation, or decline it with accept=false (spyglass)",
)
def answer_invitation(org_id: str, accept: bool = True, who: Caller = Depends(caller)) -> m.Success:
    if not who.store.answer_invitation(org_id, who.account.id, accept):
        raise not_found("No invitation from that organization that can be accepted")
    return m.Success(success=True)


@router.delete("/org/member/{user}", response_model=m.Success, responses=responses(403, 404))
def remove_member(user: str, who: Caller = Depends(caller)) -> m.Success:
    org = administered(who, "remove members")
    try:
        account = who.store.find_account(user)
    except AmbiguousUser as exc:
        raise bad_request(str(exc)) from None
    if account is not None and org.role_of(account.id) == "admin":
        raise bad_request(f"{account.username} is an admin of {org.name}: admins cannot be removed")
    if account is None or not who.store.remove_member(org.id, account.id):
        raise not_found(f"{user} is not a member of {org.name}")  # the same for no such user
    return m.Success(success=True)
