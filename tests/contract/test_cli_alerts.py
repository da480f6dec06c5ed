"""``spyglass alert ...`` and ``spyglass notifier ...`` against the embedded backend."""

from __future__ import annotations

import json

import pytest

from spyglass.cli import main
from tests.contract.test_alerts_delivery import Receiver


@pytest.fixture
def cli(backend, monkeypatch, capsys):
    monkeypatch.setenv("SPYGLASS_URL", backend.url)
    monkeypatch.setenv("SPYGLASS_API_KEY", backend.key())

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def test_alert_commands_as_json_and_text(cli):
    code, out, _ = cli("alert", "create", "office", "127.0.0.0/30", "::1", "--triggers", "new_service", "--json")
    assert code == 0
    alert = json.loads(out)
    assert (alert["size"], alert["filters"]["ip"], list(alert["triggers"])) == (
        5,
        ["127.0.0.0/30", "::1"],
        ["new_service"],
    )
    code, out, _ = cli("alert", "list")
    assert code == 0 and alert["id"] in out and "new_service" in out and "SIZE" in out
    assert cli("alert", "enable", alert["id"], "malware,vulnerable")[0] == 0
    code, out, _ = cli("alert", "enable", alert["id"], "uncommon", "any")  # apart, as docs/commands.md writes NAMES
    assert code == 0 and out.strip() == f"enabled uncommon,any on alert {alert['id']}"
    assert cli("alert", "disable", alert["id"], "uncommon", "any")[0] == 0
    assert cli("alert", "ignore", alert["id"], "malware", "127.0.0.1:80")[0] == 0
    code, _, err = cli("alert", "ignore", alert["id"], "any", "10.0.0.1:80")  # not a watched address
    assert code == 2 and "10.0.0.1:80 is outside the alert's networks (127.0.0.0/30, ::1)" in err
    assert cli("alert", "attach", alert["id"], "default")[0] == 0
    code, out, _ = cli("alert", "info", alert["id"])
    assert "malware, new_service, vulnerable" in out and "ignored for malware: 127.0.0.1:80" in out
    assert "default (email)" in out
    code, out, _ = cli("alert", "edit", alert["id"], "127.0.0.8/29", "--json")
    assert json.loads(out)["size"] == 8
    code, out, _ = cli("alert", "edit", alert["id"], "127.0.0.8/29", "--expires", "3600")
    assert code == 0 and "size        8" in out and "expires" in out and "never" not in out.split("expires")[1][:20]
    assert "default (email)" in out and "status" in out  # as info shows it: notifiers and status
    code, out, _ = cli("alert", "log", alert["id"], "--json")
    assert (code, json.loads(out)) == (0, [])
    code, out, _ = cli("alert", "triggers", "--json")
    assert {t["name"] for t in json.loads(out)} >= {"any", "new_service", "vulnerable"}
    assert cli("alert", "delete", alert["id"])[0] == 0
    code, _, err = cli("alert", "info", alert["id"])
    assert code == 4 and f"no alert has the id or the name '{alert['id']}'" in err


def test_attaching_a_notifier_that_cannot_deliver_warns_and_its_alerts_say_so(cli):
    no_address = "no e-mail address: set the notifier's 'to'"
    code, out, _ = cli("alert", "create", "demo", "127.0.0.0/30", "--triggers", "any", "--json")
    alert = json.loads(out)["id"]
    code, out, err = cli("alert", "attach", alert, "default")  # the default e-mail notifier, no 'to' yet
    assert code == 0 and out.strip() == f"attached notifier default on alert {alert}"
    assert err.strip() == f"spyglass: warning: notifier default cannot deliver: {no_address}"
    code, out, _ = cli("alert", "info", alert)
    assert f"status      notifier failing: default: {no_address}" in out and "notifying" not in out
    # A notifier deleted says which alerts it leaves without one.
    code, out, _ = cli("notifier", "create", "webhook", "url=http://127.0.0.1:9/hook")
    hook = out.strip()
    code, out, _ = cli("alert", "create", "lab", "127.0.0.4/30", "--notifier", hook, "--json")
    code, out, _ = cli("notifier", "delete", hook)
    assert (code, out.strip()) == (0, f"deleted notifier {hook}: alert lab now has no notifier")
    assert cli("alert", "delete", alert)[0] == 0 and cli("alert", "delete", "lab")[0] == 0


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (("alert", "create", "x", "10.0.0.300"), 2, "'10.0.0.300' is not an IP or CIDR range"),
        # the trigger before the size the plan refuses (newcomer trial 22: the 403 came first)
        (("alert", "create", "x", "10.0.0.0/8", "--triggers", "bogus"), 2, "Unknown trigger bogus: the triggers are"),
        (("alert", "enable", "NOPE", "any"), 4, "no alert has the id or the name 'NOPE'"),
        (("notifier", "create", "gitter", "room_id=1"), 2, "Missing required argument 'token'"),
        (("notifier", "create", "webhook", "url"), 2, "NAME=VALUE"),
    ],
)
def test_errors_are_one_line_and_an_exit_code(cli, argv, code, message):
    got, out, err = cli(*argv)
    assert (got, out) == (code, "") and message in err and len(err.splitlines()) == 1


def test_a_create_that_fails_part_way_leaves_no_alert(cli):
    code, _, err = cli("alert", "create", "half", "127.0.0.1", "--triggers", "any,bogus")
    assert code == 2 and "Unknown trigger bogus" in err
    code, out, _ = cli("alert", "list", "--json")
    assert "half" not in [a["name"] for a in json.loads(out)]


def test_notifier_commands_mask_secrets_and_test_sends(cli):
    with Receiver() as receiver:
        code, out, _ = cli("notifier", "create", "webhook", f"url={receiver.url}/in", "--description", "ops")
        hook = out.strip()
        assert code == 0 and hook.isalnum()
        code, out, _ = cli("notifier", "create", "telegram", "chat_id=42", "token=1234567890secret")
        telegram = out.strip()
        code, out, _ = cli("notifier", "list")
        assert "1234567890secret" not in out and "token=••••••••cret" in out and hook in out
        code, out, _ = cli("notifier", "test", hook)
        assert (code, out.strip()) == (0, "sent: HTTP 200")
        assert receiver.posts and receiver.posts[0][1]["test"] is True
    assert cli("notifier", "edit", telegram, "chat_id=43")[0] == 0
    code, out, _ = cli("notifier", "info", telegram, "--json")
    assert json.loads(out)["args"] == {"chat_id": "43", "token": "1234567890secret"}
    code, out, _ = cli("notifier", "test", hook)  # the receiver has gone
    assert code == 1 and out.startswith("failed: ")
    assert cli("notifier", "delete", hook)[0] == 0
    code, out, _ = cli("notifier", "providers", "--json")
    assert json.loads(out)["webhook"] == {"required": ["url"]}


def test_a_bad_network_is_said_as_typed_before_any_request(cli, backend):
    """A newcomer's minor: the server's answer named its API field (filters.ip: ...)."""
    for action in (("create", "office"), ("edit", "some-id")):
        code, _, err = cli("alert", *action, "127.0.0.0/30", "999.1.1.1")
        assert code == 2 and "'999.1.1.1' is not an IP or CIDR range" in err and "filters.ip" not in err
    code, out, _ = cli("alert", "list", "--json")
    assert code == 0 and json.loads(out) == []  # nothing was made


def test_the_log_lists_the_newest_attempts_as_many_as_asked(cli, backend):
    """A burst's deliveries outnumber the log's 50 lines (trial 31): --limit says how many."""
    import time

    from spyglass.testing.alerts import banner

    with Receiver() as receiver:
        hook = cli("notifier", "create", "webhook", f"url={receiver.url}/log")[1].strip()
        created = cli("alert", "create", "logged", "127.0.9.0/30", "--triggers", "any", "--notifier", hook, "--json")
        alert = json.loads(created[1])["id"]
        for port in (1, 2, 3):
            backend.collect([banner("127.0.9.1", port)])
            receiver.wait_for(f"127.0.9.1:{port}")
        deadline = time.monotonic() + 60  # a guard against a hang: each line is written once its POST is answered
        while len(json.loads(cli("alert", "log", alert, "--json")[1])) < 3:
            assert time.monotonic() < deadline, "the deliveries were never logged"
            time.sleep(0.05)
    code, out, _ = cli("alert", "log", alert, "--limit", "1", "--json")
    assert code == 0 and [(n["service"], n["outcome"]) for n in json.loads(out)] == [("127.0.9.1:3", "sent")]
    code, _, err = cli("alert", "log", alert, "--limit", "0")
    assert code == 2 and "limit" in err
