"""The ``spyglass`` command as a script uses it: output on stdout, one line and an exit code on errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from spyglass.cli import main


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spyglass", *args], capture_output=True, text=True,
                          timeout=60, env={**os.environ, **(env or {})})


def test_keys_create_prints_only_a_key(tmp_path):
    out = run("keys", "create", "--data", str(tmp_path), "--plan", "member")
    assert out.returncode == 0
    key = out.stdout.strip()
    assert len(out.stdout.splitlines()) == 1 and key.isalnum() and len(key) == 32
    from spyglass.server.store import Store

    assert Store(tmp_path).account_for_key(key).plan.name == "member"


def test_serve_prints_the_base_urls_that_answer(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "spyglass", "serve", "--port", "0", "--data", str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline().split() for _ in range(2)]
    finally:
        proc.terminate()
        proc.wait(10)
    names = [name for name, _ in lines]
    main_url = lines[0][1]
    assert names == ["main", "geonet"]  # stream and trends once they are built
    assert [url for _, url in lines] == [main_url, f"{main_url}/geonet"]


def test_info_against_a_profile_from_the_environment(backend, capsys, monkeypatch):
    monkeypatch.setenv("SPYGLASS_URL", backend.url)
    monkeypatch.setenv("SPYGLASS_API_KEY", backend.key("member"))
    assert main(["info", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["plan"] == "member" and body["usage_limits"]["query_credits"] == 100


@pytest.mark.parametrize("url_of, key, code, message", [
    (lambda b: b.url, "nope", 3, "Invalid API key"),
    (lambda b: "http://127.0.0.1:9", "nope", 5, "Cannot connect to http://127.0.0.1:9"),
])
def test_errors_are_one_line_and_an_exit_code(backend, capsys, monkeypatch, url_of, key, code, message):
    monkeypatch.setenv("SPYGLASS_URL", url_of(backend))
    monkeypatch.setenv("SPYGLASS_API_KEY", key)
    assert main(["myip"]) == code
    err = capsys.readouterr().err
    assert err.startswith("spyglass: ") and message in err and len(err.splitlines()) == 1


def test_without_a_profile_commands_use_the_embedded_backend(tmp_path):
    out = run("--data", str(tmp_path), "account")
    assert out.returncode == 0, out.stderr
    assert "Local analyst" in out.stdout


def test_profiles(capsys):
    assert main(["profile", "add", "work", "--url", "https://intel.example", "--key", "abcdefgh12345678"]) == 0
    assert main(["profile", "use", "work"]) == 0
    assert main(["profile", "list"]) == 0
    out = capsys.readouterr().out
    assert "* work: https://intel.example key ••••••••5678" in out
    assert "abcdefgh12345678" not in out
    assert main(["profile", "add", "bad", "--url", "intel.example"]) == 2
    assert main(["profile", "use", "missing"]) == 2
