"""``spyglass trends`` against the embedded backend: the chart, the numbers, facets, the month
range, --json, and errors as one line and an exit code."""

from __future__ import annotations

import json

import pytest

from spyglass.cli import main
from tests.conftest import backend_with
from tests.contract.test_trends import BANNERS, MONTHS


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("cli-trends"), BANNERS) as backend:
        yield backend


@pytest.fixture
def as_user(served, monkeypatch):
    def use(plan: str = "enterprise"):
        monkeypatch.setenv("SPYGLASS_URL", served.url)
        monkeypatch.setenv("SPYGLASS_API_KEY", served.key(plan))

    return use


def test_prints_a_chart_and_the_numbers_of_every_month(as_user, capsys):
    as_user()
    assert main(["trends", "net:198.19.1.0/24"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "\x1b" not in out  # piped: no colours
    assert "┌" in out and "█" in out and "2025-01" in out  # the chart's frame, bars and a month tick
    rows = [line.split() for line in out.splitlines() if line[:5] == "2025-" and len(line.split()) == 2]
    assert rows == [[m, str(n)] for m, n in zip(MONTHS, [3, 2, 0, 1, 0, 1], strict=True)]
    assert captured.err.strip() == "up to 3 services a month over 6 months (2025-01 to 2025-06)"


def test_facets_chart_their_top_values_per_month_with_a_legend(as_user, capsys):
    as_user()
    assert main(["trends", "net:198.19.1.0/24", "--facets", "country:3", "--from", "2025-02", "--to", "2025-04"]) == 0
    out = capsys.readouterr().out
    assert "country: its top values month by month (3 charted)" in out
    assert "stacked, bottom to top: ██ DE  ▓▓ FR  ▒▒ US"  # ties by value in out
    table = out[out.index("Month    DE") :].splitlines()[:4]
    assert [line.split() for line in table] == [
        ["Month", "DE", "FR", "US"],
        ["2025-02", "1", "·", "1"],  # FR was not among February's top values
        ["2025-03", "·", "·", "·"],
        ["2025-04", "·", "1", "·"],
    ]
    assert "2025-01" not in out and "2025-05" not in out


def test_json_is_the_trends_response(as_user, capsys):
    as_user()
    assert main(["trends", "port:22", "--facets", "port", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["total"] == 3
    assert [m["month"] for m in body["matches"]] == MONTHS
    assert body["facets"]["port"][0] == {"key": "2025-01", "values": [{"count": 1, "value": "22"}]}


def test_json_holds_the_months_of_from_to_and_their_total(as_user, capsys):
    as_user()
    argv = ["trends", "net:198.19.1.0/24", "--facets", "country", "--from", "2025-02", "--to", "2025-04"]
    assert main([*argv, "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [m["month"] for m in body["matches"]] == MONTHS[1:4]
    assert body["total"] == 3  # 2 + 0 + 1, not the 7 of every month
    assert [m["key"] for m in body["facets"]["country"]] == MONTHS[1:4]


def test_a_start_after_the_end_is_a_usage_error(as_user, capsys):
    as_user()
    assert main(["trends", "port:22", "--from", "2025-07", "--to", "2025-06"]) == 2
    err = capsys.readouterr().err
    assert "the start month 2025-07 is after the end month 2025-06" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "plan", "code", "words"),
    [
        (["trends", "port:22"], "member", 3, "enterprise"),
        (["trends", "after:2025-01-01"], "enterprise", 2, "unknown filter 'after'"),
        (["trends", "port:22", "--facets", "nope"], "enterprise", 2, "nope"),
        (["trends", "port:22", "--from", "2025-13"], "enterprise", 2, "YYYY-MM"),
    ],
)
def test_errors_are_one_line_and_an_exit_code(as_user, capsys, argv, plan, code, words):
    as_user(plan)
    assert main(argv) == code
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1
