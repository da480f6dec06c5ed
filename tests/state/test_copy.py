"""``spyglass state copy``: an embedded backend's accounts, keys, credits, scans, saved queries,
alerts and notifiers into PostgreSQL, then served from there by a backend with another data dir."""

from __future__ import annotations

import pytest

from spyglass.cli import EXIT_OK, EXIT_USAGE, main
from spyglass.client import AuthenticationError, Clients
from spyglass.netblocks import parse_networks
from spyglass.server.state.sqlite.accounts import Store
from spyglass.server.state.sqlite.alerts import AlertStore
from spyglass.server.state.sqlite.directory import Directory
from spyglass.server.state.sqlite.scans import ScanStore
from tests.state.shared import ServeProcess


def embedded_state(data_dir):
    """What an embedded backend leaves in its data dir: a member who spent credits, scanned and
    saved a query that another account voted on; the member's key."""
    store = Store(data_dir)
    key = store.create_key("member", username="alice")
    alice = store.account_for_key(key)
    store.charge(alice.id, query=3, scan=2)
    voter = store.account_for_key(store.create_key("free", username="bob"))
    store.close()
    scans = ScanStore(data_dir)
    scan = scans.create(account_id=alice.id, api_key="digest", size=2, spec='{"127.0.0.1": [[80, "http"]]}', probes=2)
    scans.finish(scan.id)
    scans.close()
    directory = Directory(data_dir)
    saved = directory.save(alice.id, "Alice's nginx", "nginx country:DE", "kept across the copy", ["web", "copied"])
    directory.vote(saved.id, voter.id, 1)
    directory.close()
    alerts = AlertStore(data_dir)
    alert = alerts.create_alert(alice.id, "Office", parse_networks(["198.51.100.0/24"]), expires=0)
    alerts.set_triggers(alert.id, ["open_database"], True)
    notifier = alerts.create_notifier(alice.id, "webhook", "ops hook", {"url": "http://127.0.0.1:9/hook"})
    alerts.set_attached(alert.id, notifier, True)
    alerts.close()
    return key, scan.id


async def test_a_copied_key_works_on_a_postgresql_backend_with_all_it_had(tmp_path, postgres_url, capsys):
    key, scan_id = embedded_state(tmp_path / "embedded")
    assert main(["state", "copy", "--from", str(tmp_path / "embedded"), "--state", postgres_url]) == EXIT_OK
    out = capsys.readouterr().out
    assert "2 accounts, 2 api_keys" in out and "1 scans" in out and "state-secret" not in out
    with ServeProcess(tmp_path / "shared", None, postgres_url) as backend:
        async with Clients.from_profile(backend.profile(key)) as c:
            profile = await c.account.profile()
            info = await c.account.api_info()
            scans = await c.scans.list()
            found = await c.directory.search("tag:copied")
            more = await c.directory.save("After the copy", "apache", "", "web")
            alerts = await c.alerts.list()
            notifiers = await c.notifiers.list()
        async with Clients.from_profile(backend.profile("0" * 32)) as stranger:
            with pytest.raises(AuthenticationError):
                await stranger.account.profile()
    assert profile.member and (info.query_credits, info.scan_credits) == (100 - 3, 100 - 2)
    assert [(s.id, s.status) for s in scans.matches] == [(scan_id, "DONE")]
    assert [(q.title, q.votes, q.tags) for q in found.matches] == [("Alice's nginx", 1, ["web", "copied"])]
    assert more.id > found.matches[0].id  # new rows take ids after the copied ones
    assert [(a.name, sorted(a.triggers), a.filters.ip) for a in alerts] == [
        ("Office", ["open_database"], ["198.51.100.0/24"])
    ]
    hooks = [n for n in notifiers.matches if n.provider == "webhook"]  # (beside the account's e-mail one)
    assert [n.description for n in hooks] == ["ops hook"]
    assert [n["id"] for n in alerts[0].notifiers or []] == [hooks[0].id]


def test_a_copy_into_a_state_in_use_is_refused_and_changes_nothing(tmp_path, postgres_url, capsys):
    embedded_state(tmp_path / "embedded")
    argv = ["state", "copy", "--from", str(tmp_path / "embedded"), "--state", postgres_url]
    assert main(argv) == EXIT_OK
    capsys.readouterr()
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "holds accounts, scans, saved queries or alerts already" in err and len(err.strip().splitlines()) == 1
    assert main(["state", "copy", "--from", str(tmp_path / "nothing"), "--state", postgres_url]) == EXIT_USAGE
    assert "holds no embedded backend's state" in capsys.readouterr().err
