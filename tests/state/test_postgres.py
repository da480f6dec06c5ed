"""The PostgreSQL state through the CLI and over HTTP: state init, addresses and passwords that
cannot be used, hostile text only ever a parameter, a server that goes away and comes back."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import psycopg
import pytest

from spyglass.cli import EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE, main
from spyglass.server.state.postgres import PostgresAccounts
from spyglass.server.state.postgres.schema import MIGRATIONS
from spyglass.testing.backend import backend_with
from spyglass.testing.postgres import PostgresServer
from tests.servers import installed
from tests.store.test_clickhouse import HOSTILE


def test_state_init_creates_then_finds_the_schema(postgres_url, capsys):
    for _ in range(2):  # a second run upgrades nothing and says the same
        assert main(["state", "init", "--state", postgres_url]) == EXIT_OK
        out = capsys.readouterr().out
        assert f"tables ready, schema version {len(MIGRATIONS)}" in out and "state-secret" not in out
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT version FROM spyglass_schema").fetchall() == [(len(MIGRATIONS),)]


def test_a_schema_newer_than_this_spyglass_is_refused(postgres_url, tmp_path, capsys):
    assert main(["state", "init", "--state", postgres_url]) == EXIT_OK
    with psycopg.connect(postgres_url) as conn:
        conn.execute("UPDATE spyglass_schema SET version = 99")
    capsys.readouterr()
    for argv in (["state", "init"], ["serve", "--data", str(tmp_path)]):
        assert main([*argv, "--state", postgres_url]) == EXIT_USAGE
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"schema version 99, newer than this spyglass knows ({len(MIGRATIONS)})" in err


@pytest.mark.parametrize(
    "address",
    [
        "mysql://u:p@127.0.0.1/db",
        "postgresql://u:p@127.0.0.1:http/db",
        "postgresql://u:p@127.0.0.1:5432",
        "postgresql://u:p@127.0.0.1:5432/db?nonsense=1",
    ],
)
def test_an_address_that_is_none_is_one_line_and_exit_2(address, tmp_path, capsys):
    for argv in (["state", "init", "--state", address], ["serve", "--data", str(tmp_path), "--state", address]):
        assert main(argv) == EXIT_USAGE
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "no state address" in err and ":p@" not in err


def test_a_wrong_password_is_one_line_and_exit_2(postgres_server, postgres_url, tmp_path, capsys, monkeypatch):
    wrong = postgres_url.replace(":state-secret@", ":not-it@")
    monkeypatch.setenv("SPYGLASS_STATE", wrong)  # the environment names it as --state would
    for argv in (["state", "init"], ["serve", "--data", str(tmp_path)], ["keys", "create", "--data", str(tmp_path)]):
        assert main(argv) == EXIT_USAGE
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "password authentication failed" in err and "not-it" not in err


def test_an_unreachable_server_is_one_line(tmp_path, capsys):
    nobody = "postgresql://u:secret@127.0.0.1:1/db"  # nothing listens on port 1
    assert main(["state", "init", "--state", nobody]) == EXIT_UNAVAILABLE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot reach the state" in err and "secret" not in err


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_text_reaches_postgresql_only_as_parameters(postgres_url, tmp_path, value):
    state = PostgresAccounts(postgres_url, tmp_path)
    try:
        if "\x00" in value:  # PostgreSQL text holds no NUL: refused, and no lookup with one fails
            with pytest.raises(ValueError, match="NUL"):
                state.create_account(value)
            assert state.find_account(value) is None and state.organization(value) is None
            assert state.answer_invitation(value, 1, accept=True) is False
            return
        admin, key = state.create_account(value, "enterprise", email=f"{value}@x.example", display_name=value)
        assert state.find_account(value) == admin == state.account_for_key(key)
        assert state.find_account(f"{value}@X.example") == admin
        org = state.own_organization(admin)
        assert org.name == value and state.organization(value) is None
        other, _ = state.create_account(value + "2")
        assert state.invite(org.id, other.id, admin.id) and state.answer_invitation(org.id, other.id, accept=True)
        assert [a.username for a in state.organization(org.id).members] == [value + "2"]
    finally:
        state.close()
    with psycopg.connect(postgres_url) as conn:  # every table still there, holding what it was given
        assert conn.execute("SELECT count(*) FROM accounts").fetchone()[0] == 2
        assert conn.execute("SELECT username FROM accounts ORDER BY id").fetchall() == [(value,), (value + "2",)]


@pytest.mark.external
def test_a_server_gone_mid_request_is_503_with_retry_after_then_recovered(tmp_path):
    with installed():
        server = PostgresServer().start()
    try:
        with backend_with(tmp_path / "data", [], state=server.url()) as backend:
            key = backend.key("member")
            search = f"{backend.url}/intel/host/search"
            ok = httpx.get(search, params={"key": key, "query": "port:22"})
            assert ok.status_code == 200 and ok.headers["x-query-credits"] == "99"
            server.stop()
            gone = httpx.get(search, params={"key": key, "query": "port:22"}, timeout=30)
            assert gone.status_code == 503 and gone.headers["retry-after"].isdigit()
            said = gone.json()["error"]  # to anyone, with no key too: nothing of where the state is
            assert said == "Service unavailable: the shared state cannot be used now. Try again shortly"
            nokey = httpx.post(f"{backend.url}/intel/alert", params={"key": "0" * 32}, json={}, timeout=30)
            assert nokey.status_code == 503 and nokey.json()["error"] == said
            # a request with a body has its key checked before the body is read: answered the same
            posted = httpx.post(f"{backend.url}/intel/alert", params={"key": key}, json={"name": "x"}, timeout=30)
            assert posted.status_code == 503 and posted.headers["retry-after"] == gone.headers["retry-after"]
            assert posted.json()["error"] == said
            server.start()  # on the same port: the backend reconnects by itself
            deadline = time.monotonic() + 30
            while (again := httpx.get(search, params={"key": key, "query": "port:22"}, timeout=30)).status_code != 200:
                assert again.status_code == 503 and time.monotonic() < deadline
                time.sleep(0.2)
            assert again.headers["x-query-credits"] == "98"  # the failed request cost nothing
    finally:
        server.remove()


def test_the_password_comes_from_a_password_file_as_the_docs_say(postgres_url, tmp_path, capsys, monkeypatch):
    """docs/several-machines.md keeps the password out of the command line: the address without it,
    the password in PostgreSQL's password file ($PGPASSFILE, or ~/.pgpass)."""
    from urllib.parse import urlsplit

    parts = urlsplit(postgres_url)
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"{parts.hostname}:{parts.port}:*:{parts.username}:{parts.password}\n")
    passfile.chmod(0o600)
    without = postgres_url.replace(f":{parts.password}@", "@")
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    monkeypatch.setenv("SPYGLASS_STATE", without)
    assert main(["state", "init"]) == EXIT_OK
    assert "warning" not in capsys.readouterr().err


def test_serve_warns_of_a_password_on_its_command_line_once_it_serves(postgres_url, tmp_path):
    """`ps` shows every local user a command line for as long as serve runs: the docs put the
    state's password there (issue 44, minor 8). Said once serving (a failure stays one line)."""

    def stderr_of_serve(*state: str, env: dict[str, str] | None = None) -> str:
        command = [sys.executable, "-m", "spyglass", "serve", "--data", str(tmp_path / "d"), "--port", "0", *state]
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})}
        ) as process:
            assert process.stdout is not None and process.stdout.readline().startswith("main")
            process.terminate()
            return process.communicate(timeout=30)[1]

    said = stderr_of_serve("--state", postgres_url)
    assert "the password in --state is seen by every user of this machine (ps)" in said and "state-secret" not in said
    assert "warning: the password" not in stderr_of_serve(env={"SPYGLASS_STATE": postgres_url})
