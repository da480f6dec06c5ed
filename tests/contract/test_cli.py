"""The ``spyglass`` command as a script uses it: output on stdout, one line and an exit code on errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from spyglass.cli import main


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "spyglass", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.external
def test_keys_create_prints_only_a_key(tmp_path):
    out = run("keys", "create", "--data", str(tmp_path), "--plan", "member")
    assert out.returncode == 0
    key = out.stdout.strip()
    assert len(out.stdout.splitlines()) == 1 and key.isalnum() and len(key) == 32
    from spyglass.server.state.sqlite.accounts import Store

    assert Store(tmp_path).account_for_key(key).plan.name == "member"


@pytest.mark.external
def test_serve_prints_the_base_urls_that_answer(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "spyglass", "serve", "--port", "0", "--data", str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [proc.stdout.readline().split() for _ in range(4)]
    finally:
        proc.terminate()
        proc.wait(10)
    names = [name for name, _ in lines]
    main_url = lines[0][1]
    assert names == ["main", "stream", "trends", "geonet"]
    assert [url for _, url in lines] == [main_url, f"{main_url}/stream", f"{main_url}/trends", f"{main_url}/geonet"]


def test_info_against_a_profile_from_the_environment(backend, capsys, monkeypatch):
    monkeypatch.setenv("SPYGLASS_URL", backend.url)
    monkeypatch.setenv("SPYGLASS_API_KEY", backend.key("member"))
    assert main(["info", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["plan"] == "member" and body["usage_limits"]["query_credits"] == 100
    assert main(["info"]) == 0
    said = capsys.readouterr().out  # counts with separators as the dashboard shows them, flags in words
    assert "100 of 100" in said and "True" not in said and "False" not in said
    budgets = [line.split() for line in said.splitlines() if "facets a request" in line or "saved queries an" in line]
    assert budgets == [["facets", "a", "request", "10"], ["saved", "queries", "an", "hour", "20"]]  # issue 44
    assert body["usage_limits"]["notifier_tests"] == 20 and body["usage_limits"]["directory_words"] == 16
    assert body["usage_limits"]["internet_scans"] == 1 and "internet scans at once" in said
    lines = [line.split() for line in said.splitlines()]
    assert body["usage_limits"]["scans_hour"] == 30 and ["scans", "an", "hour", "30"] in lines
    assert body["usage_limits"]["requests_at_once"] == 4 and "requests at once" in said
    assert main(["account"]) == 0  # as info says them: flags in words, counts with separators
    said = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1:] for line in said.splitlines()}
    assert rows["member"] in (["yes"], ["no"]) and "True" not in said and "False" not in said
    assert re.fullmatch(r"[\d,]+", rows["credits"][0])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", rows["created"][0]) and "T" not in rows["created"][1]


@pytest.mark.parametrize(
    "url_of, key, code, message",
    [
        (lambda b: b.url, "nope", 3, "Invalid API key"),
        (lambda b: "http://127.0.0.1:9", "nope", 5, "Cannot connect to http://127.0.0.1:9"),
    ],
)
def test_errors_are_one_line_and_an_exit_code(backend, capsys, monkeypatch, url_of, key, code, message):
    monkeypatch.setenv("SPYGLASS_URL", url_of(backend))
    monkeypatch.setenv("SPYGLASS_API_KEY", key)
    assert main(["myip"]) == code
    err = capsys.readouterr().err
    assert err.startswith("spyglass: ") and message in err and len(err.splitlines()) == 1


def test_a_refused_key_names_the_url_and_the_profile(backend, capsys, monkeypatch):
    monkeypatch.setenv("SPYGLASS_API_KEY", "nopenopenope1234")
    monkeypatch.setenv("SPYGLASS_URL", backend.url)
    assert main(["info"]) == 3
    assert capsys.readouterr().err == (
        f"spyglass: Invalid API key (HTTP 401): {backend.url} refused the key "
        f"••••••••1234 from SPYGLASS_API_KEY (profile 'embedded')\n"
    )
    monkeypatch.delenv("SPYGLASS_API_KEY")
    monkeypatch.delenv("SPYGLASS_URL")
    assert main(["profile", "add", "work", "--url", backend.url, "--key", "wrongwrongwrong9"]) == 0
    assert main(["--profile", "work", "count", "port:22"]) == 3
    err = capsys.readouterr().err
    assert f"{backend.url} refused the key ••••••••ong9 (profile 'work')" in err and "wrongwrong" not in err


@pytest.mark.parametrize("body", ["{broken", '{"profiles": {"w": {"url": 5}}}', '{"keymap": []}'])
@pytest.mark.parametrize("argv", [["info"], ["profile", "list"], ["--profile", "w", "myip"]])
def test_a_broken_config_file_exits_2_with_one_line_naming_it(capsys, body, argv):
    from spyglass.config import Config

    Config.path().parent.mkdir(parents=True)
    Config.path().write_text(body)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"spyglass: the config file {Config.path()} ") and len(err.splitlines()) == 1


@pytest.mark.external
def test_the_embedded_backend_takes_the_key_and_hosts_from_the_environment(tmp_path):
    """Slow (about 8 s): four CLI processes, three of which start the embedded backend."""
    key = run("keys", "create", "--data", str(tmp_path), "--plan", "member").stdout.strip()
    out = run("--data", str(tmp_path), "info", "--json", env={"SPYGLASS_API_KEY": key})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["plan"] == "member"  # not the local account's enterprise plan
    out = run("--data", str(tmp_path), "info", env={"SPYGLASS_API_KEY": "unknownunknown99"})
    assert (
        out.returncode == 3 and "refused the key ••••••••wn99 from SPYGLASS_API_KEY (profile 'embedded')" in out.stderr
    )
    out = run(
        "ping", "127.0.0.1", env={"SPYGLASS_DATA_DIR": str(tmp_path), "SPYGLASS_GEONET_URL": "http://127.0.0.1:9"}
    )
    assert out.returncode == 5 and "Cannot connect to http://127.0.0.1:9" in out.stderr


def test_profile_remove(capsys):
    assert main(["profile", "add", "gone", "--url", "https://intel.example"]) == 0
    assert main(["profile", "use", "gone"]) == 0
    assert main(["profile", "remove", "gone"]) == 0
    assert main(["profile", "list"]) == 0
    assert capsys.readouterr().out == "* embedded: embedded backend key (none)\n"
    assert main(["profile", "remove", "gone"]) == 2
    assert main(["profile", "remove", "embedded"]) == 2
    assert "the embedded one cannot be removed" in capsys.readouterr().err


@pytest.mark.external
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


def test_a_url_with_no_host_exits_2_naming_it(capsys, monkeypatch):
    monkeypatch.setenv("SPYGLASS_URL", "http://")
    assert main(["search", "port:22"]) == 2
    assert "url: 'http://' names no host" in capsys.readouterr().err


@pytest.mark.external
def test_serve_demo_fills_an_empty_backend_once(tmp_path, capsys, monkeypatch):
    """Slow (about 5 s): two `spyglass serve` processes, the first loading the demo data."""
    key = run("keys", "create", "--data", str(tmp_path), "--plan", "member").stdout.strip()
    monkeypatch.setenv("SPYGLASS_API_KEY", key)
    totals = []
    for _ in range(2):
        proc = subprocess.Popen(
            [sys.executable, "-m", "spyglass", "serve", "--demo", "--port", "0", "--data", str(tmp_path)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            monkeypatch.setenv("SPYGLASS_URL", proc.stdout.readline().split()[1])
            assert main(["count", "net:198.18.0.0/15", "--json"]) == 0
            totals.append(json.loads(capsys.readouterr().out)["total"])
        finally:
            proc.terminate()
            proc.wait(10)
    assert totals[0] == totals[1] > 1000


@pytest.mark.parametrize("argv", [["count", "port:22"], ["host", "198.18.0.7"], ["info"]])
def test_a_data_dir_that_is_not_there_is_refused_by_the_commands_that_ask(tmp_path, capsys, argv):
    """Trial 27: a mistyped --data made a new data dir and answered from its demo data (972)."""
    missing = tmp_path / "typo" / "data"
    assert main(["--data", str(missing), *argv]) == 2
    assert f"--data {missing}: no such folder" in capsys.readouterr().err and not missing.exists()


@pytest.mark.parametrize("argv", [["keys", "create"], ["import", "{file}"], ["info"]])
def test_a_data_dir_that_is_a_file_is_one_line_and_exit_2(tmp_path, capsys, argv):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("{}\n")
    assert main(["--data", str(not_a_dir), *[a.format(file=not_a_dir) for a in argv]]) == 2
    assert capsys.readouterr().err == f"spyglass: cannot use {not_a_dir}: it is a file, not a folder\n"


def test_filters_lists_every_filter_with_an_example(capsys):
    from spyglass.query import FILTERS

    assert main(["filters", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert set(listed["filters"]) == set(FILTERS) and "vuln.verified" in listed["facets"]
    assert all(entry["example"] for entry in listed["filters"].values())
    assert main(["filters"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.split()[:3] == ["port", "int", "port:22"] for line in lines), lines[:5]
    assert "ip" in listed["paid_facets"] and "port" not in listed["paid_facets"]
    assert (
        lines[-1].startswith("facets that name hosts or banners cost a query credit") and "ssh.fingerprint" in lines[-1]
    )


def test_ping_refuses_demo_addresses_of_a_demo_backend(tmp_path, capsys, monkeypatch):
    from spyglass.client import GeoNetClient
    from tests.conftest import start_backend

    async def never(*args, **kwargs):  # a guard: no packet may leave for the demo range
        raise AssertionError("a demo address was measured")

    monkeypatch.setattr(GeoNetClient, "ping", never)
    monkeypatch.setattr(GeoNetClient, "geoping", never)
    server, backend = start_backend(tmp_path)
    backend.app.state.banners.records.set_meta("demo", "1")
    with server:
        monkeypatch.setenv("SPYGLASS_URL", backend.url)
        monkeypatch.setenv("SPYGLASS_API_KEY", backend.key())
        for command in ("ping", "geoping"):
            assert main([command, "198.18.0.7"]) == 2
            assert "synthetic demo address" in capsys.readouterr().err
    backend.store.close()


def test_scan_list_pages(backend, capsys, monkeypatch):
    key = backend.key("member")
    account = backend.store.account_for_key(key)
    store = backend.app.state.scans.store
    made = [store.create(account_id=account.id, api_key="d", size=1, spec="{}", probes=1) for _ in range(101)]
    monkeypatch.setenv("SPYGLASS_URL", backend.url)
    monkeypatch.setenv("SPYGLASS_API_KEY", key)
    assert main(["scan", "list", "--page", "2", "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["total"] == 101 and [s["id"] for s in second["matches"]] == [made[0].id]
    assert main(["scan", "list"]) == 0
    out = capsys.readouterr()
    assert len(out.out.splitlines()) == 100 and "101 scans (page 1, 100 shown)" in out.err


def test_a_command_beside_a_dashboard_whose_backend_just_restarted_goes_to_the_new_one(backend, capsys, monkeypatch):
    """kill -9 of the dashboard's backend, then at once `spyglass count port:22`: the command read
    the old address, failed after 10 s naming a port nothing listened on, while the dashboard had
    started its backend again elsewhere (newcomer trial 2, major 2). Nothing got through: the
    command asks the data dir's backend again and goes to the one that serves it now."""
    import socket
    from dataclasses import replace

    from spyglass.config import active_profile
    from spyglass.local import launcher

    with socket.socket() as closed:  # the old backend's port: nothing listens there now
        closed.bind(("127.0.0.1", 0))
        gone = f"http://127.0.0.1:{closed.getsockname()[1]}"
    key = backend.key("member")
    monkeypatch.setenv("HOME", str(backend.data_dir))
    served = []

    class Attached:  # the data dir's backend, as its lock says: first the one just killed
        attached = True

        def __init__(self, profile) -> None:
            self.profile = profile

        def start(self):
            served.append(gone if not served else backend.url)
            return replace(self.profile, url=served[-1], key=key)

        async def wait_ready(self) -> None:
            pass

        def stop(self) -> None:
            pass

    monkeypatch.setattr(launcher.EmbeddedBackend, "for_profile", classmethod(lambda cls, p, d=None: Attached(p)))
    assert active_profile(None).embedded
    assert main(["count", "port:22"]) == 0
    assert served == [gone, backend.url] and capsys.readouterr().out.strip()


def test_a_query_of_one_negated_filter_is_a_query_not_an_option(backend, capsys, monkeypatch):
    """`spyglass count -port:22` said the query was missing, with no word of `--` (newcomer
    trial 2, major 3): a negated filter is the query; another word with a dash is hinted at."""
    monkeypatch.setenv("SPYGLASS_URL", backend.url)
    monkeypatch.setenv("SPYGLASS_API_KEY", backend.key("member"))
    assert main(["count", "-port:22", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] >= 0
    assert main(["count", "-nginx"]) == 2
    assert "(a query that starts with -: spyglass count -- '-nginx port:22')" in capsys.readouterr().err
    assert main(["count", "--", "-nginx"]) == 0


def test_a_negated_filter_reaches_the_dashboard_s_pane_as_it_was_typed(capsys):
    """The mark that keeps '-port:22' a query was left on `--pane search '-port:22 nginx'`: the
    box held an invisible NUL before it, and 0 results (newcomer trial 3, major 1)."""
    from spyglass.cli import parse

    args = parse(["--pane", "search", "-port:22 nginx"])
    assert [v for v in vars(args).values() if isinstance(v, tuple)] == [("search", "-port:22 nginx")]
    assert "\x00" not in repr(vars(parse(["count", "-port:22"])))
    assert main(["count", "--", "-port:22", "--json", "x"]) == 2  # no command named: its own hint
    assert "spyglass  --" not in capsys.readouterr().err
