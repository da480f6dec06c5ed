"""The organization (enterprise): ``/org``, ``PUT`` and ``DELETE /org/member/{user}``.

An enterprise account comes with an organization of which it is the admin (created on first
use). Its admins add and remove members: existing accounts, by username or e-mail address;
``notify`` e-mails a new invitation, once, through the configured SMTP server (``serve --smtp``).
"""

from __future__ import annotations

import re
from email.message import EmailMessage
from typing import Any

from fastapi import APIRouter

from spyglass import models as m
from spyglass.server import mail
from spyglass.server.auth import Caller, KeyRateLimiter, too_many
from spyglass.server.deps import Accounts, Mail, Who
from spyglass.server.errors import ApiError, ErrorBody, bad_request, not_found, responses
from spyglass.server.state.accounts import Account, AccountState, AmbiguousUser, Organization

router = APIRouter()
# What a user to invite can be written as: refused otherwise (a slip, 'a@@b'), which says nothing of who exists
USER_NAMED = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}|[^@\s]{1,64}@[^@\s]{1,253}")
NOTIFY_BURST = 20  # invitation e-mails an organization may ask for at once, given back in an hour (add_member says 20)
notifying = KeyRateLimiter(NOTIFY_BURST / 3600, burst=NOTIFY_BURST)  # by organization

WHAT = "The organization"
MAIL_ERRORS: dict[int | str, dict[str, Any]] = {
    429: {"model": ErrorBody, "description": "notify: the organization asked for too many e-mails (see Retry-After)"},
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


def administered(accounts: AccountState, who: Caller, action: str) -> Organization:
    """The caller's organization, if the caller is one of its admins."""
    who.require_enterprise(WHAT)
    org = accounts.own_organization(who.account)
    if org.role_of(who.account.id) != "admin":
        raise ApiError(403, f"Only an admin of the organization {org.name} may {action}")
    return org


def invitation(account: Account, org: Organization, admin: Account) -> EmailMessage:
    assert account.email
    return mail.message(
        account.email,
        f"{admin.username} invites you to the organization {org.name}",
        f"{admin.username} invites you ({account.username}) to the organization {org.name} on spyglass.\n"
        f"Accept with: spyglass org accept -- {org.id}\n",
    )


@router.get("/org", response_model=m.Organization, responses=responses(403))
def organization(accounts: Accounts, who: Who) -> m.Organization:
    who.require_enterprise(WHAT)
    return body(accounts.own_organization(who.account))


@router.put("/org/member/{user}", response_model=m.Success, responses={**responses(400, 403), **MAIL_ERRORS})
def add_member(user: str, accounts: Accounts, outbox: Mail, who: Who, notify: bool = False) -> m.Success:
    """Invite the user: they join when they accept (``/org/invitations``, beyond the seed). The
    answer is the same, after the same work, whether the user exists, can join or not: it tells
    nobody who has an account or where it belongs. ``notify`` e-mails a new invitation once,
    after the answer; an organization asks for e-mails at most 20 times an hour."""
    org = administered(accounts, who, "add members")
    if not USER_NAMED.fullmatch(user):
        raise bad_request(f"{user[:80]!r} is neither a username nor an e-mail address")
    if notify and outbox.server is None:  # the server's setting, asked before anything about the user
        raise ApiError(501, f"{mail.NO_SMTP}: the invitation e-mail cannot be sent")
    if notify and (wait := notifying.check(org.id)) is not None:
        raise too_many(
            wait,
            f"Too many invitation e-mails from the organization {org.name} (at most {NOTIFY_BURST} an hour): "
            "try again later, or invite without notify",
        )
    try:
        account = accounts.find_account(user)
    except AmbiguousUser:
        account = None
    invited = accounts.invite(org.id, account.id if account else None, who.account.id)
    if invited and notify and account and account.email:  # best effort: the invitation stands either way
        outbox.post(invitation(account, org, who.account), f"the invitation e-mail to {account.username}")
    return m.Success(success=True)


@router.get("/org/invitations", response_model=list[m.OrgInvitation], summary="Your pending invitations (spyglass)")
def invitations(accounts: Accounts, who: Who) -> list[m.OrgInvitation]:
    return [m.OrgInvitation(id=i, name=name, invited=when) for i, name, when in accounts.invitations(who.account.id)]


@router.post(
    "/org/invitations/{org_id}",
    response_model=m.Success,
    responses=responses(404),
    summary="Accept an invitation, or decline it with accept=false (spyglass)",
)
def answer_invitation(org_id: str, accounts: Accounts, who: Who, accept: bool = True) -> m.Success:
    if not accounts.answer_invitation(org_id, who.account.id, accept):
        raise not_found("No invitation from that organization that can be accepted")
    return m.Success(success=True)


@router.delete("/org/member/{user}", response_model=m.Success, responses=responses(403, 404))
def remove_member(user: str, accounts: Accounts, who: Who) -> m.Success:
    org = administered(accounts, who, "remove members")
    try:
        account = accounts.find_account(user)
    except AmbiguousUser as exc:
        raise bad_request(str(exc)) from None
    if account is not None and org.role_of(account.id) == "admin":
        raise bad_request(f"{account.username} is an admin of {org.name}: admins cannot be removed")
    if account is None or not accounts.remove_member(org.id, account.id):
        raise not_found(f"{user} is not a member of {org.name}")  # the same for no such user
    return m.Success(success=True)
