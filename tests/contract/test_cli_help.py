"""Every command's --help works and names the command; the parser is built from the families."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from spyglass.cli import FAMILIES, build_parser, main


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path the parser knows, e.g. ('profile', 'add'), walking nested subcommands."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((*path, name))
                found += commands(sub, (*path, name))
    return found


ALL = commands(build_parser())


def test_the_walk_sees_every_family_and_nested_actions():
    top = {c[0] for c in ALL if len(c) == 1}
    assert {
        "info",
        "account",
        "myip",
        "headers",
        "keys",
        "search",
        "count",
        "host",
        "export",
        "import",
        "generate",
        "ping",
        "geoping",
        "dns",
        "geodns",
        "stream",
        "replay",
        "trends",
        "domain",
        "resolve",
        "reverse",
        "directory",
        "serve",
        "profile",
        "dashboard",
        "scan",
    } <= top
    assert {
        ("keys", "create"),
        ("profile", "add"),
        ("profile", "remove"),
        ("scan", "submit"),
        ("directory", "save"),
        ("data", "download"),
        ("org", "add"),
    } <= set(ALL)
    assert len(set(FAMILIES)) == len(FAMILIES)


@pytest.mark.parametrize("command", ALL, ids=" ".join)
def test_help_of_every_command(command, capsys):
    assert main([*command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: spyglass {' '.join(command)}")


@pytest.mark.external
def test_help_in_a_fresh_process_loads_neither_textual_nor_the_web_stack():
    code = (
        "import sys; from spyglass.cli import main; rc = main(['search', '--help']); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'httpx', 'fastapi', 'uvicorn', "
        "'pydantic', 'starlette'}), rc)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.splitlines()[-1] == "[] 0"


@pytest.mark.parametrize(
    "argv",
    [
        ["search"],
        ["nope"],
        ["import"],
        ["host", "1.1.1.1", "--bogus"],
        ["generate", "--count", "0", "-o", "x.json"],
        ["search", "x", "--page", "0"],
        ["--pane", "Bad!"],
        ["--pane", "host", "a", "b"],
    ],
)
def test_every_usage_error_exits_2_with_one_line(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("spyglass: ") and "--help" in err[0], err


@pytest.mark.parametrize("group", ["keys", "profile"])
def test_a_group_without_an_action_shows_its_help_and_exits_2(group, capsys):
    assert main([group]) == 2
    assert capsys.readouterr().err.startswith(f"usage: spyglass {group}")
