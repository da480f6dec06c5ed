"""Who calls and what they spend, on either state. The key check keeps a right key's account a few
seconds: the state is asked once for a run of requests, never for what has changed since (a
charge, a new month), and wrong keys are never kept. A charge made while the work runs is given
back when the work fails, and short of credits is a 402 with nothing spent."""

from __future__ import annotations

import logging
from datetime import datetime

import pytest

from spyglass.server.auth import Caller, Charger, KeyCheck
from spyglass.server.banners.store import StoreUnavailable
from spyglass.server.errors import ApiError


class Asked:
    """A state that counts the lookups of keys it answers."""

    def __init__(self, state) -> None:
        self.state, self.lookups = state, 0

    def account_for_key(self, key):
        self.lookups += 1
        return self.state.account_for_key(key)

    def __getattr__(self, name):
        return getattr(self.state, name)


def test_a_right_key_is_asked_of_the_state_once_while_kept(open_state):
    state = Asked(open_state())
    account, key = state.create_account("a", "member")
    keys = KeyCheck(state)
    assert all(keys.authenticate(key, "127.0.0.1") == account for _ in range(20))
    assert state.lookups == 1
    unkept = KeyCheck(state, ttl=0)
    for _ in range(3):
        unkept.authenticate(key, "127.0.0.1")
    assert state.lookups == 4


def test_wrong_keys_are_never_kept_and_still_cost_their_address(open_state):
    state = Asked(open_state())
    keys = KeyCheck(state)
    for _ in range(3):
        with pytest.raises(ApiError) as refused:
            keys.authenticate("0" * 32, "192.0.2.1")
        assert refused.value.status == 401
    assert state.lookups == 3
    keys.failed.burst = 0
    with pytest.raises(ApiError) as refused:
        keys.authenticate("0" * 32, "192.0.2.1")
    assert refused.value.status == 429


def test_a_charge_is_spent_in_the_state_and_kept_at_once(open_state):
    state = Asked(open_state())
    account, key = state.create_account("a", "member")
    state.set_credits(account.id, query=2)
    keys = KeyCheck(state)
    who = Caller(key, keys.authenticate(key, "127.0.0.1"))
    Charger(keys, who)(query=1)
    assert keys.authenticate(key, "127.0.0.1").query_credits == 1 == state.account(account.id).query_credits
    state.charge(account.id, query=1)  # as another backend would: this process's copy is now old
    with pytest.raises(ApiError) as refused:
        Charger(keys, Caller(key, keys.authenticate(key, "127.0.0.1")))(query=1)
    assert refused.value.status == 402
    assert keys.authenticate(key, "127.0.0.1").query_credits == 0  # the refusal read the balance afresh
    assert state.lookups == 1


def test_a_new_month_is_not_missed_while_a_key_is_kept(open_state):
    now = [datetime(2026, 1, 31, 23, 59, 59)]
    state = open_state(clock=lambda: now[0])
    account, key = state.create_account("a", "member")
    state.charge(account.id, query=100)
    keys = KeyCheck(state, ttl=3600)
    assert keys.authenticate(key, "127.0.0.1").query_credits == 0
    now[0] = datetime(2026, 2, 1, 0, 0, 1)
    assert keys.authenticate(key, "127.0.0.1").query_credits == 100


def test_a_negative_charge_gives_credits_back(open_state):
    state = open_state()
    account, _ = state.create_account("a", "member")
    state.set_credits(account.id, query=0, scan=1)
    assert state.charge(account.id, query=-2, scan=-1).query_credits == 2
    assert (state.account(account.id).query_credits, state.account(account.id).scan_credits) == (2, 2)


def charger(state, credits: int) -> tuple[Charger, int]:
    account, key = state.create_account(f"a{credits}", "member")
    state.set_credits(account.id, query=credits)
    keys = KeyCheck(state)
    return Charger(keys, Caller(key, keys.authenticate(key, "127.0.0.1"))), account.id


def test_a_charge_made_while_the_work_runs(open_state):
    state = open_state()
    charge, account_id = charger(state, 2)
    with charge.meanwhile(query=1):
        worked = True
    assert worked and charge.who.account.query_credits == 1 == state.account(account_id).query_credits
    with pytest.raises(ValueError), charge.meanwhile(query=1):
        raise ValueError("the search failed")
    assert state.account(account_id).query_credits == 1  # given back
    with charge.meanwhile(query=0):  # nothing to spend: nothing asked
        pass
    assert state.account(account_id).query_credits == 1


def test_short_of_credits_the_work_runs_then_402_and_nothing_spent(open_state):
    state = open_state()
    charge, account_id = charger(state, 0)
    done = []
    with pytest.raises(ApiError) as refused, charge.meanwhile(query=1):
        done.append(True)
    assert refused.value.status == 402 and "Insufficient query credits" in refused.value.message
    assert done and state.account(account_id).query_credits == 0
    with pytest.raises(KeyError), charge.meanwhile(query=1):  # the work's own failure is what is said
        raise KeyError("failed")
    assert state.account(account_id).query_credits == 0


def test_a_charge_not_given_back_is_logged_and_the_failure_said(open_state, caplog):
    state = open_state()
    charge, account_id = charger(state, 5)

    class Away:  # the state went away after the charge: giving back fails
        def __init__(self, state):
            self.state = state

        def charge(self, account_id, *, query=0, scan=0):
            if query < 0:
                raise StoreUnavailable("the state at postgresql://x@y/z failed: gone")
            return self.state.charge(account_id, query=query, scan=scan)

        def __getattr__(self, name):
            return getattr(self.state, name)

    charge.keys.accounts = Away(state)
    with caplog.at_level(logging.WARNING), pytest.raises(ValueError), charge.meanwhile(query=1):
        raise ValueError("the search failed")
    assert state.account(account_id).query_credits == 4
    assert f"account {account_id} not given back 1 query, 0 scan credits" in caplog.text
