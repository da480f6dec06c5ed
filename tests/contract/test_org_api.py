"""The organization: the client against the backend under uvicorn, members added and removed by
username or e-mail, and the notification e-mail delivered to a real SMTP server on loopback."""

from __future__ import annotations

import json
import socket
import time
from email import message_from_bytes

import pytest

from spyglass.client import BadRequest, Clients, Forbidden, NotFound, ServerError
from spyglass.models import Organization
from tests.conftest import ORIGINAL, start_backend
from tests.servers import SmtpServer


@pytest.fixture(scope="module")
def smtp():
    with SmtpServer() as server:
        yield server


@pytest.fixture(scope="module")
def org_backend(tmp_path_factory, smtp):
    server, backend = start_backend(tmp_path_factory.mktemp("org-backend"), smtp_server=smtp.address)
    with server:
        yield backend
    backend.store.close()


def account(backend, username: str, plan: str = "free", email: str | None = None) -> str:
    _, key = backend.store.create_account(username, plan, email=email)
    return key


@pytest.fixture
async def admin(org_backend, request):
    name = f"admin-{request.node.name[:20]}"
    key = account(org_backend, name, "enterprise", email=f"{name}@Acme.test")
    async with Clients.from_profile(org_backend.profile(key)) as clients:
        clients.username = name  # type: ignore[attr-defined]
        yield clients


async def test_an_enterprise_account_comes_with_its_organization(admin):
    org = await admin.org.get()
    assert [a.username for a in org.admins] == [admin.username] and org.members == []
    assert org.domains == ["acme.test"] and org.name == admin.username and org.created
    assert (await admin.org.get()).id == org.id  # the same one every time


async def joined(backend, key: str) -> list[str]:
    """The user behind ``key`` accepts every invitation; the organizations it joined."""
    async with Clients.from_profile(backend.profile(key)) as them:
        pending = await them.org.invitations()
        for invitation in pending:
            assert await them.org.accept(invitation.id)
        return [i.id for i in pending]


async def test_members_are_invited_by_username_or_email_join_when_they_accept_and_are_removed(org_backend, admin):
    bob = account(org_backend, "bob-1", email="bob-1@acme.test")
    carol = account(org_backend, "carol-1", email="Carol-1@Acme.test")
    assert await admin.org.add_member("bob-1")
    assert await admin.org.add_member("carol-1@acme.TEST")  # e-mail, any case
    org = await admin.org.get()
    assert org.members == []  # invited: nobody's e-mail is the organization's before they accept
    assert await joined(org_backend, bob) == [org.id] and await joined(org_backend, carol) == [org.id]
    assert [(u.username, u.email) for u in (await admin.org.get()).members] == [
        ("bob-1", "bob-1@acme.test"),
        ("carol-1", "Carol-1@Acme.test"),
    ]
    assert await admin.org.add_member("bob-1")  # a member already: nothing more happens
    assert await joined(org_backend, bob) == []
    assert await admin.org.remove_member("bob-1@acme.test")
    assert [u.username for u in (await admin.org.get()).members] == ["carol-1"]
    with pytest.raises(NotFound, match="bob-1 is not a member"):
        await admin.org.remove_member("bob-1")
    with pytest.raises(BadRequest, match="admins cannot be removed"):
        await admin.org.remove_member(admin.username)


async def test_a_user_may_decline_and_an_unknown_invitation_is_404(org_backend, admin):
    key = account(org_backend, "kim-1")
    assert await admin.org.add_member("kim-1")
    org = await admin.org.get()
    async with Clients.from_profile(org_backend.profile(key)) as kim:
        assert [i.id for i in await kim.org.invitations()] == [org.id]
        assert await kim.org.accept(org.id, accept=False)
        assert await kim.org.invitations() == []
        with pytest.raises(NotFound, match="No invitation"):
            await kim.org.accept(org.id)
    assert (await admin.org.get()).members == []


async def test_the_answer_never_tells_whether_a_user_exists_or_can_join(org_backend, admin):
    """An unknown user, one of another organization and one that can join get the same answer, and
    removing an unknown user reads as removing a non-member."""
    other = account(org_backend, "frank-1", "enterprise")
    async with Clients.from_profile(org_backend.profile(other)) as frank:
        await frank.org.get()  # frank now administers his own
    account(org_backend, "gail-1")
    answers = [await admin.org.add_member(u) for u in ("nobody@nowhere.test", "frank-1", "gail-1")]
    assert answers == [True, True, True]
    assert await joined(org_backend, other) == []  # frank was not invited away from his own
    for user in ("nobody", "gail-1"):
        with pytest.raises(NotFound, match=f"{user} is not a member"):
            await admin.org.remove_member(user)


async def test_a_user_written_as_neither_a_username_nor_an_email_is_bad_input(org_backend, admin):
    """Trial 27: 'a@@b' was "invited"; a malformed name says nothing of who exists, so it is refused."""
    for user in ("a@@b", "two words", "@acme.test", "bob@"):
        with pytest.raises(BadRequest, match="is neither a username nor an e-mail address"):
            await admin.org.add_member(user)


async def test_only_admins_manage_members(org_backend, admin):
    key = account(org_backend, "dave-1", "enterprise", email="dave@acme.test")
    account(org_backend, "erin-1")
    assert await admin.org.add_member("dave-1")
    await joined(org_backend, key)
    async with Clients.from_profile(org_backend.profile(key)) as dave:
        org = await dave.org.get()  # a member sees the organization
        assert [u.username for u in org.members] == ["dave-1"]
        with pytest.raises(Forbidden, match="Only an admin"):
            await dave.org.add_member("erin-1")
        with pytest.raises(Forbidden, match="Only an admin"):
            await dave.org.remove_member("dave-1")


@pytest.mark.parametrize("plan", ["free", "member"])
async def test_organization_methods_are_enterprise_only(org_backend, plan):
    key = account(org_backend, f"plain-{plan}", plan)
    async with Clients.from_profile(org_backend.profile(key)) as c:
        for call in (c.org.get(), c.org.add_member("x"), c.org.remove_member("x")):
            with pytest.raises(Forbidden, match="enterprise"):
                await call


def mail_to(smtp: SmtpServer, address: str) -> list[bytes]:
    """The messages to ``address`` once one has arrived."""
    deadline = time.monotonic() + 15
    while not any(address in to for to, _ in smtp.messages):
        assert time.monotonic() < deadline, f"no e-mail to {address} arrived"
        time.sleep(0.05)
    return [content for to, content in smtp.messages if address in to]


async def test_notify_sends_an_invitation_through_the_smtp_server(org_backend, admin, smtp):
    account(org_backend, "gina-1", email="gina@acme.test")
    assert await admin.org.add_member("gina-1", notify=True)
    msg = message_from_bytes(mail_to(smtp, "gina@acme.test")[0])
    assert msg["To"] == "gina@acme.test" and admin.username in msg["Subject"]
    assert "gina-1" in msg.get_payload() and "spyglass org accept" in msg.get_payload()


async def test_notify_needs_a_mail_server_and_a_failed_mail_still_invites(tmp_path, backend):
    # the session backend has no SMTP server configured: said before anything about the user
    async with Clients.from_profile(backend.profile(backend.key("enterprise"))) as c:
        with pytest.raises(ServerError, match="No SMTP server") as refused:
            await c.org.add_member("nobody-at-all", notify=True)
        assert "--smtp HOST[:PORT]" in str(refused.value) and "SPYGLASS_SMTP" in str(refused.value)
    with socket.socket() as unheard:  # bound and never listening: refused, and the port stays ours
        unheard.bind(("127.0.0.1", 0))
        server, failing = start_backend(tmp_path, smtp_server=unheard.getsockname()[:2])
        with server:
            _, key = failing.store.create_account("jo-1", "free", email="jo@acme.test")
            async with Clients.from_profile(failing.profile(failing.key("enterprise"))) as c:
                assert await c.org.add_member("jo-1", notify=True)  # the e-mail failed: the invitation stands
            assert len(await joined(failing, key)) == 1
    failing.store.close()


def test_the_fixture_parses():
    org = Organization.model_validate(json.loads((ORIGINAL / "org.json").read_text()))
    assert org.admins[0].username == "acme-admin"


async def test_an_email_shared_by_two_accounts_invites_neither(org_backend, admin):
    a = account(org_backend, "twin-a", email="twins@acme.test")
    account(org_backend, "twin-b", email="Twins@acme.test")
    assert await admin.org.add_member("twins@acme.test")
    assert await joined(org_backend, a) == []
    assert await admin.org.add_member("twin-a")
    assert len(await joined(org_backend, a)) == 1


async def test_an_invitation_is_e_mailed_once_however_often_it_is_repeated(org_backend, admin, smtp):
    account(org_backend, "hal-1", email="hal@acme.test")
    account(org_backend, "ida-1", email="ida@acme.test")
    for _ in range(5):
        assert await admin.org.add_member("hal-1", notify=True)
    assert await admin.org.add_member("ida-1", notify=True)
    mail_to(smtp, "ida@acme.test")  # e-mails go one at a time, in order: any other to hal came first
    assert len(mail_to(smtp, "hal@acme.test")) == 1


async def test_an_organization_asks_for_so_many_invitation_e_mails_an_hour(org_backend, admin):
    """Counted whoever is named (a refusal that depended on the user would tell who exists)."""
    from spyglass.client import RateLimited

    account(org_backend, "jan-1", email="jan@acme.test")
    for asked in range(100):
        try:
            await admin.org.add_member(f"nobody-{asked}", notify=True)
        except RateLimited:
            break
    else:
        pytest.fail("100 invitation e-mails asked for and none refused")
    from spyglass.server.routers.org import NOTIFY_BURST

    assert asked == NOTIFY_BURST
    for user in ("nobody-else", "jan-1"):
        with pytest.raises(RateLimited, match="Too many invitation e-mails") as refused:
            await admin.org.add_member(user, notify=True)
        assert refused.value.retry_after and refused.value.retry_after > 60
    assert await admin.org.add_member("jan-1")  # without an e-mail, inviting goes on


async def test_the_answer_is_the_same_for_anyone_and_never_waits_for_the_e_mail(tmp_path):
    """A missing user, a new invitation and a pending one: the same status and body, each given
    while the SMTP server has not yet said a word (it listens, but answers only afterwards)."""
    import httpx

    late = SmtpServer()
    server, backend = start_backend(tmp_path, smtp_server=late.address)
    with server:
        key = backend.key("enterprise")
        backend.store.create_account("kim-1", "free", email="kim@acme.test")
        answers = []
        async with httpx.AsyncClient(base_url=backend.url, timeout=60) as http:
            for user in ("nobody-1", "kim-1", "kim-1"):
                answer = await http.put(f"/org/member/{user}", params={"key": key, "notify": "true"})
                answers.append((answer.status_code, answer.content))
        assert answers == [(200, b'{"success":true}')] * 3
        with late:  # the e-mail, queued at the answer, goes now
            msg = message_from_bytes(mail_to(late, "kim@acme.test")[0])
        assert "kim-1" in msg.get_payload() and len(late.messages) == 1
    backend.store.close()
