"""How the command line reaches the dashboard: ``spyglass [--pane NAME [ARG]]`` and ``spyglass dashboard``."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from spyglass.cli import main


@pytest.fixture
def calls(monkeypatch):
    """The dashboard's entry point, recorded instead of run (no terminal here)."""
    seen = []
    fake = types.ModuleType("spyglass.tui.app")
    fake.run_dashboard = (  # started: the backend started early, only where stdin and stdout are a terminal
        lambda profile_name=None, data=None, started=None, **panes: seen.append((profile_name, data, panes)) or 0
    )
    monkeypatch.setitem(sys.modules, "spyglass.tui.app", fake)
    return seen


@pytest.mark.parametrize(
    "argv, expected",
    [
        ([], (None, None, {"pane": None, "arg": None})),
        (["--pane", "host", "198.18.0.1"], (None, None, {"pane": "host", "arg": "198.18.0.1"})),
        (["--pane", "search", "port:22 country:DE"], (None, None, {"pane": "search", "arg": "port:22 country:DE"})),
        (["--pane", "geo"], (None, None, {"pane": "geo", "arg": None})),
        (
            ["--profile", "work", "--data", "/d", "--pane", "account"],
            ("work", Path("/d"), {"pane": "account", "arg": None}),
        ),
        (["dashboard", "--pane", "host", "::1", "--profile", "p"], ("p", None, {"pane": "host", "arg": "::1"})),
        (["--data", "/d", "dashboard"], (None, Path("/d"), {"pane": None, "arg": None})),
    ],
)
def test_the_pane_and_its_argument_reach_the_dashboard(calls, argv, expected):
    assert main(argv) == 0
    assert calls == [expected]


@pytest.mark.parametrize("argv", [["--pane"], ["--pane", "Host"], ["--pane", "host", "a", "b"], ["--pane", "1x"]])
def test_a_bad_pane_is_a_usage_error(calls, argv, capsys):
    assert main(argv) == 2
    assert calls == [] and capsys.readouterr().err.splitlines()[-1].startswith("spyglass: ")
