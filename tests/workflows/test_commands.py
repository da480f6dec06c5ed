"""Every command the README and docs/ document, run as a user runs it: as a process, with ``--data`` naming
a data dir that a ``spyglass serve`` holds, so that each one attaches to that backend (the CLI
beside a running backend) rather than starting its own. The last test reads the README and docs/
and fails when a command they document is run by no test in tests/workflows."""

from __future__ import annotations

import ast
import csv
import json
import re
import socket
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.contract.test_guard import serve
from tests.servers import ZONE_NETWORKS, DnsServer
from tests.workflows.commands import spyglass

pytestmark = pytest.mark.external  # spyglass commands as processes

ROOT = Path(__file__).resolve().parents[2]


class Served(NamedTuple):
    data: Path
    url: str

    def cli(self, *args: str, **kw) -> subprocess.CompletedProcess[str]:
        return spyglass("--data", str(self.data), *args, **kw)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``serve --demo`` as an operator starts it, collecting live, its DNS a server on loopback."""
    data = tmp_path_factory.mktemp("served")
    with DnsServer() as dns:
        nets = [arg for net in ZONE_NETWORKS for arg in ("--geonet-allow", net)]
        options = ("--demo", "--demo-rate", "20", "--nameserver", f"{dns.host}:{dns.port}", *nets)
        with serve(data, *options) as url:
            yield Served(data, url)


def test_account_commands(served):
    assert re.search(r"^plan +enterprise$", served.cli("info").stdout, re.M)
    assert "Local analyst" in served.cli("account").stdout
    assert json.loads(served.cli("info", "--json").stdout)["plan"] == "enterprise"


def test_search_count_host_and_filters(served):
    total = int(served.cli("count", "port:22").stdout.strip().replace(",", ""))
    assert total > 0
    rows = served.cli("search", "port:22", "--facets", "country:3").stdout.splitlines()
    assert rows and all("22/tcp" in row for row in rows if row[:1].isdigit())
    found = json.loads(served.cli("search", "port:443", "--json").stdout)["matches"][0]
    assert found["ip_str"] in served.cli("host", found["ip_str"]).stdout
    assert "country:DE" in served.cli("filters").stdout
    domain = found["domains"][0]
    assert domain in served.cli("domain", domain).stdout


@pytest.mark.parametrize(
    ("query", "words"),
    [("(port:22", "unbalanced parenthesis"), ("port:22 OR", "OR is not an operator"), ("nginx AND", "AND is not")],
)
def test_search_and_count_say_what_the_parser_does_not_read(served, query, words):
    """Another language's syntax is no silent empty answer: one line saying what, and exit 2."""
    for command in ("count", "search"):
        done = served.cli(command, query, ok=False)
        assert done.returncode == 2 and not done.stdout
        assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_export_writes_every_result(served, tmp_path):
    def total() -> int:
        return int(served.cli("count", "port:22").stdout.strip().replace(",", ""))

    out, before = tmp_path / "port22.csv", total()
    served.cli("export", "port:22", "-o", str(out), "--fields", "ip_str,port,org")
    with out.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert before <= len(rows) <= total() and {r["port"] for r in rows} == {"22"}  # it collects meanwhile


def test_geonet_and_dns_commands(served):
    assert "127.0.0.1" in served.cli("ping", "127.0.0.1").stdout
    assert "MX 10 mail.example.test" in served.cli("dns", "example.test", "--rtype", "MX").stdout
    assert "192.0.2.10" in served.cli("resolve", "example.test").stdout
    assert "example.test" in served.cli("reverse", "192.0.2.10").stdout


def test_alerts_directory_org_and_bulk_data(served, tmp_path):
    created = json.loads(served.cli("alert", "create", "watch", "198.18.0.0/24", "--json").stdout)
    assert created["id"] in served.cli("alert", "list").stdout
    assert "default" in served.cli("notifier", "list").stdout
    assert "Industrial control systems" in served.cli("directory", "list").stdout
    assert "Local analyst" in served.cli("org").stdout
    assert "daily" in served.cli("data", "list").stdout
    newest = served.cli("data", "files", "daily").stdout.split()[0]
    served.cli("data", "download", "daily", newest, "-o", str(tmp_path / newest))
    assert (tmp_path / newest).stat().st_size > 0


def test_ignoring_for_a_trigger_that_is_off_says_so(served):
    made = json.loads(served.cli("alert", "create", "quiet", "198.18.9.0/30", "--json").stdout)["id"]
    done = served.cli("alert", "ignore", made, "uncommon", "198.18.9.1:8080")
    assert done.stdout.strip() == f"ignoring 198.18.9.1:8080 for uncommon on {made}"
    assert done.stderr.strip() == "spyglass: uncommon is off on this alert: this applies once it is turned on"
    served.cli("alert", "enable", made, "uncommon")
    assert "ignored for uncommon: 198.18.9.1:8080" in served.cli("alert", "info", made).stdout
    assert not served.cli("alert", "ignore", made, "uncommon", "198.18.9.2:8080").stderr  # on: nothing to add


def test_alert_commands_take_a_name_that_one_alert_has(served):
    solo = json.loads(served.cli("alert", "create", "solo-name", "198.18.10.0/30", "--json").stdout)["id"]
    assert served.cli("alert", "enable", "solo-name", "malware").stdout.strip() == f"enabled malware on alert {solo}"
    assert re.search(r"^triggers +malware$", served.cli("alert", "info", "solo-name").stdout, re.M)
    assert served.cli("alert", "info", solo).stdout == served.cli("alert", "info", "solo-name").stdout  # ids too
    twins = [
        json.loads(served.cli("alert", "create", "twin-name", net, "--json").stdout)["id"]
        for net in ("198.18.11.0/30", "198.18.12.0/30")
    ]
    done = served.cli("alert", "delete", "twin-name", ok=False)
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.strip() == f"spyglass: 2 alerts are named 'twin-name': give the id of one ({', '.join(twins)})"
    done = served.cli("alert", "log", "no-such-alert", ok=False)
    assert done.returncode == 4
    assert done.stderr.strip() == "spyglass: no alert has the id or the name 'no-such-alert' (spyglass alert list)"
    served.cli("alert", "delete", "solo-name")
    listed = served.cli("alert", "list").stdout
    assert solo not in listed and all(twin in listed for twin in twins)


def test_trends_counts_a_query_month_by_month(served):
    """Trends count every banner the index has held, each scan of a service too: at least the
    current banners that ``count`` sees (counted first: the demo collector keeps adding)."""
    current = int(served.cli("count", "port:22").stdout.strip().replace(",", ""))
    result = json.loads(served.cli("trends", "port:22", "--facets", "country:3", "--json").stdout)
    assert sum(m["count"] for m in result["matches"]) >= current > 0
    assert result["facets"]["country"]
    assert "services a month over" in served.cli("trends", "port:22").stderr


def test_scan_submit_finds_a_listener_on_loopback(served):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        done = served.cli("scan", "submit", "127.0.0.1", "--ports", str(port), "--wait", "--json")
    assert f'"port": {port}' in done.stdout


def test_scan_internet_runs_on_the_default_networks_and_outside_targets_are_bad_input(served):
    """Issue 45, major 4 and minor 7: with the stock settings an internet scan of a port runs over
    loopback (it was refused: 16,777,217 addresses past --scan-max-ips) and finds the listener on
    127.0.0.1; a target outside the scan networks is bad input (exit 2) naming the setting the
    dashboard's backend takes as well as serve's option."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        scan_id = served.cli("scan", "internet", str(port), "generic").stdout.strip()
        while json.loads(served.cli("scan", "status", scan_id, "--json").stdout)["found"] < 1:
            pass  # each status is a process: no sleep needed between them
    assert "CANCELLED" in served.cli("scan", "cancel", scan_id).stdout
    outside = served.cli("scan", "submit", "10.0.0.1", ok=False)
    assert outside.returncode == 2 and "SPYGLASS_SCAN_ALLOW" in outside.stderr and "Traceback" not in outside.stderr


def test_stream_replay_and_a_profile(served, tmp_path):
    """The stream follows what the backend collects (its demo collector and a replay); a profile
    names the backend as a remote one, with a key an operator gave the collector role."""
    key = served.cli("keys", "create", "--plan", "enterprise", "--collector").stdout.strip()
    assert len(served.cli("stream", "--count", "3", "--json").stdout.splitlines()) == 3
    dump = tmp_path / "few.json.gz"
    spyglass("generate", "--count", "20", "--seed", "9", "-o", str(dump))
    remote = {"SPYGLASS_URL": served.url, "SPYGLASS_API_KEY": key}
    assert "20" in spyglass("replay", str(dump), env=remote).stdout + spyglass("replay", str(dump), env=remote).stderr
    spyglass("profile", "add", "ops", "--url", served.url, "--key", key)
    assert int(spyglass("--profile", "ops", "count", "port:22").stdout.strip().replace(",", "")) > 0


def test_replay_beside_a_running_backend_says_what_to_run_then_runs(served, tmp_path):
    """Issue 45, minor 8: beside the backend that serves the data dir, replay asked for
    SPYGLASS_URL, then answered with an HTTP hint ("pass it as the query parameter 'key'")."""
    dump = tmp_path / "few.json"
    spyglass("generate", "--count", "5", "--seed", "4", "-o", str(dump))
    refused = served.cli("replay", str(dump), ok=False)
    assert (
        refused.returncode == 2
        and "keys create --collector" in refused.stderr
        and "query parameter" not in refused.stderr
    )
    key = served.cli("keys", "create", "--collector").stdout.strip()
    assert "5 banners sent" in served.cli("replay", str(dump), env={"SPYGLASS_API_KEY": key}).stderr
    one = tmp_path / "one.json"
    one.write_bytes(dump.read_bytes().splitlines(keepends=True)[0])
    assert "1 banner sent, 0 new" in served.cli("replay", str(one), env={"SPYGLASS_API_KEY": key}).stderr
    keyless = spyglass("count", "port:22", env={"SPYGLASS_URL": served.url, "SPYGLASS_API_KEY": ""}, ok=False)
    assert "needs an API key: set SPYGLASS_API_KEY" in keyless.stderr and "query parameter" not in keyless.stderr


# -- the commands the README and docs/ document, each run by some workflow test --------------------------------
VALUED_OPTIONS = ("--profile", "--data", "--pane")  # spyglass's own options that take a value


def documented_commands(page: Path) -> set[str]:
    """The first word after ``spyglass`` in ``page``'s code (blocks and inline, which may wrap)."""
    text = page.read_text()
    code = re.findall(r"```[a-z]*\n(.*?)```", text, re.S) + re.findall(
        r"`([^`]+)`", re.sub(r"```.*?```", "", text, flags=re.S)
    )
    found = set()
    for span in code:
        for match in re.finditer(r"(?:^|[\s/])spyglass((?:\s+-{0,2}[a-z][a-z-]*)+)", span):
            words = match.group(1).split()
            while words and words[0].startswith("-"):  # a global option, and its value if it takes one
                words = words[2:] if words[0] in VALUED_OPTIONS else words[1:]
            if words:
                found.add(words[0])
    return found


def commands_run_by_workflows() -> set[str]:
    """The commands the tests in this folder run: the first plain word given to ``spyglass(...)``
    or to a ``.cli(...)`` (options and their values skipped)."""
    run = set()
    for path in Path(__file__).parent.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name == "serve":  # tests.contract.test_guard.serve: `spyglass serve` as a process
                    run.add("serve")
                elif name in ("spyglass", "cli"):
                    words = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                    plain = [w for w in words if re.fullmatch(r"[a-z][a-z-]*", w)]
                    run.update(plain[:1])
    return run


def test_every_documented_command_is_run_by_a_workflow_test():
    readme = documented_commands(ROOT / "README.md")
    assert {"serve", "import", "search", "keys"} <= readme  # the README was read
    reference = documented_commands(ROOT / "docs" / "commands.md")
    assert {"alert", "notifier", "replay", "org"} <= reference  # and the full reference
    documented = set().union(readme, *(documented_commands(page) for page in (ROOT / "docs").glob("*.md")))
    missing = documented - commands_run_by_workflows() - {"spyglass"}
    assert not missing, f"commands the README or docs/ document that no test in tests/workflows runs: {sorted(missing)}"


def test_store_copy_to_a_clickhouse_that_is_not_there_says_one_line(tmp_path):
    """The driver logged a 15-line traceback before the command's own line (issue 45, minor 5; the
    same lines filled a backend's log during a ClickHouse outage, issue 44)."""
    data, dump = tmp_path / "data", tmp_path / "banners.json.gz"
    spyglass("generate", "--count", "50", "-o", str(dump))
    spyglass("import", "--data", str(data), str(dump))
    with socket.socket() as closed:  # a port nothing listens on: refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    done = spyglass("store", "copy", "--data", str(data), "--store", f"clickhouse://127.0.0.1:{port}/x", ok=False)
    assert done.returncode == 5
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "Traceback" not in done.stderr
    assert "cannot use the banner store" in done.stderr
