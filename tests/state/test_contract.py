"""What the API asks of the accounts' state, on SQLite and on PostgreSQL alike: accounts, keys,
plans and credits, organizations and invitations."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import pytest

from spyglass.server.state.accounts import LOCAL_KEY_FILE, AccountExists, AmbiguousUser, NoCreditsLeft


def test_an_account_and_its_key(state):
    account, key = state.create_account("alice", "member", email="Alice@Example.org", display_name="Alice")
    assert state.account_for_key(key) == account == state.account(account.id)
    assert (account.plan.name, account.query_credits, account.scan_credits) == ("member", 100, 100)
    assert account.email == "Alice@Example.org" and not account.researcher and not account.collector
    assert state.account_for_key("0" * 32) is None and state.account_for_key("") is None
    with pytest.raises(AccountExists):
        state.create_account("alice")
    second = state.add_key(account.id)
    assert second != key and state.account_for_key(second) == account
    researcher = state.account_for_key(state.create_key("enterprise", True, collector=True, username="bob"))
    assert researcher.username == "bob" and researcher.researcher and researcher.collector
    assert state.account_for_key(state.create_key()).username.startswith("user-")


def test_charges_are_atomic_and_never_negative(state):
    account, _ = state.create_account("a", "member")
    assert state.charge(account.id, query=99).query_credits == 1
    with pytest.raises(NoCreditsLeft) as short:
        state.charge(account.id, query=2)
    assert short.value.kind == "query" and state.account(account.id).query_credits == 1
    with pytest.raises(NoCreditsLeft) as short:
        state.charge(account.id, query=1, scan=101)  # short on scan: nothing spent
    assert short.value.kind == "scan"
    assert (state.account(account.id).query_credits, state.account(account.id).scan_credits) == (1, 100)
    state.set_credits(account.id, query=7, scan=3)
    assert state.charge(account.id, scan=3).scan_credits == 0 and state.account(account.id).query_credits == 7


def test_concurrent_charges_spend_each_credit_exactly_once(state):
    account, _ = state.create_account("racer", "member")
    state.set_credits(account.id, query=150)

    def spend(_: int) -> bool:
        try:
            state.charge(account.id, query=1)
        except NoCreditsLeft:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        spent = sum(pool.map(spend, range(200)))
    assert spent == 150 and state.account(account.id).query_credits == 0


def test_what_is_written_survives_a_restart(open_state):
    state = open_state()
    account, key = state.create_account("a", "member")
    state.charge(account.id, scan=10)
    state.close()
    assert open_state().account_for_key(key).scan_credits == 90


def test_allowances_start_again_each_month(open_state):
    now = [datetime(2026, 1, 31, 23, 0)]
    state = open_state(clock=lambda: now[0])
    account, key = state.create_account("a", "member")
    state.charge(account.id, query=100, scan=5)
    assert state.account_for_key(key).query_credits == 0
    now[0] = datetime(2026, 2, 1, 0, 1)
    refreshed = state.account_for_key(key)
    assert (refreshed.query_credits, refreshed.scan_credits) == (100, 100)
    state.charge(account.id, query=1)
    assert state.account_for_key(key).query_credits == 99  # reset once, not at every lookup


def test_the_local_account_and_its_key_file(state):
    key = state.local_key()
    account = state.account_for_key(key)
    assert account.username == "local" and account.plan.name == "enterprise" and account.researcher
    assert (state.data_dir / LOCAL_KEY_FILE).read_text() == key and state.local_key() == key
    assert (state.data_dir / LOCAL_KEY_FILE).stat().st_mode & 0o777 == 0o600
    (state.data_dir / LOCAL_KEY_FILE).unlink()  # lost: a new key for the same account
    again = state.local_key()
    assert again != key and state.account_for_key(again).id == account.id


def test_finding_an_account_by_name_or_address(state):
    alice, _ = state.create_account("alice", email="Alice@Example.org")
    assert state.find_account("alice") == alice == state.find_account("alice@EXAMPLE.org")
    assert state.find_account("nobody") is None
    state.create_account("alice2", email="alice@example.org")
    with pytest.raises(AmbiguousUser):
        state.find_account("ALICE@example.org")


def test_an_organization_comes_with_an_enterprise_admin(state):
    admin, _ = state.create_account("boss", "enterprise", email="boss@corp.example", display_name="Corp")
    assert state.organization_of(admin.id) is None
    org = state.own_organization(admin)
    assert state.own_organization(admin) == org == state.organization(org.id) == state.organization_of(admin.id)
    assert (org.name, org.domains, org.upgrade_type) == ("Corp", ["corp.example"], "enterprise")
    assert len(org.id) == 11 and not org.id.startswith("-") and org.admins == [admin] and org.members == []
    assert org.role_of(admin.id) == "admin" and state.organization("nope") is None


def test_invitations_joining_and_leaving(state):
    admin, _ = state.create_account("boss", "enterprise")
    org = state.own_organization(admin)
    member, _ = state.create_account("m")
    assert state.invite(org.id, member.id, admin.id) is True
    assert state.invite(org.id, member.id, admin.id) is False  # pending already
    assert state.invite(org.id, None, admin.id) is False  # nobody
    assert state.invite(org.id, admin.id, admin.id) is False  # a member already
    assert [i[:2] for i in state.invitations(member.id)] == [(org.id, org.name)]
    assert state.invitations(admin.id) == []
    assert state.answer_invitation(org.id, member.id, accept=True) is True
    assert state.invitations(member.id) == [] and state.organization_of(member.id).role_of(member.id) == "member"
    assert state.answer_invitation(org.id, member.id, accept=True) is False  # no such invitation now
    assert state.remove_member(org.id, admin.id) is False  # an admin is no member to remove
    assert state.remove_member(org.id, member.id) is True and state.organization_of(member.id) is None
    state.invite(org.id, member.id, admin.id)
    assert state.answer_invitation(org.id, member.id, accept=False) is True
    assert state.organization_of(member.id) is None and state.invitations(member.id) == []


def test_a_member_of_one_organization_cannot_join_another(state):
    first, _ = state.create_account("first", "enterprise")
    second, _ = state.create_account("second", "enterprise")
    one, other = state.own_organization(first), state.own_organization(second)
    person, _ = state.create_account("p")
    assert state.invite(one.id, person.id, first.id) and state.invite(other.id, person.id, second.id)
    assert state.answer_invitation(one.id, person.id, accept=True)
    assert state.invitations(person.id) == []  # joining one ends the others
    assert state.organization_of(person.id).id == one.id
