"""The ``spyglass`` command: the dashboard with no arguments, otherwise scriptable commands.

Exit codes: 0 success, 1 unexpected failure (or, for ``import``, some bad lines), 2 bad input or
usage, 3 key, plan or credits, 4 not found, 5 connection, timeout, rate limit or server failure
(:mod:`spyglass.cli.exits`).

Each family of commands lives in ``cli/commands/<family>.py`` and declares its subcommands in
``register(sub, common)``; :data:`FAMILIES` is the one list the parser is built from. Nothing
here imports the client, Textual or the web stack: commands import what they need when they run.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import signal
import sys
from typing import ClassVar

from spyglass import __version__
from spyglass.cli.exits import (
    EXIT_ACCESS,
    EXIT_FAILURE,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    Terminated,
    UsageError,
    exit_code_for,
    fail,
)

# The exit codes are the command's interface to scripts: named here too, beside main.
__all__ = [
    "EXIT_ACCESS",
    "EXIT_FAILURE",
    "EXIT_NOT_FOUND",
    "EXIT_OK",
    "EXIT_UNAVAILABLE",
    "EXIT_USAGE",
    "FAMILIES",
    "UsageError",
    "build_parser",
    "exit_code_for",
    "fail",
    "main",
]

FAMILIES = (
    "account",
    "search",
    "scans",
    "stream",
    "alerts",
    "trends",
    "directory",
    "dns",
    "files",
    "data",
    "org",
    "geonet",
    "serve",
    "store",
    "state",
    "profile",
    "dashboard",
)


class Parser(argparse.ArgumentParser):
    """argparse exits 2 on a usage error already; this keeps its message to our one-line form
    (errors are one line on stderr: the usage is one ``--help`` away)."""

    given: ClassVar[list[str]] = []  # the command line parsed (parse): a query with a dash is hinted at

    def error(self, message: str):
        command = self.prog.removeprefix("spyglass").strip()
        hint = f" (spyglass {command} --help)" if command else " (spyglass --help)"
        dashed = any(a.startswith("-") and not a.startswith("--") and len(a) > 2 for a in self.given)
        if command and dashed and ("required: query" in message or "unrecognized arguments: -" in message):
            hint = f" (a query that starts with -: spyglass {command} -- '-nginx port:22')"
        raise SystemExit(fail(f"{command}: {message}{hint}" if command else message + hint, EXIT_USAGE))


def build_parser() -> argparse.ArgumentParser:
    from spyglass.cli.common import Common

    common = Common()
    parser = Parser(
        prog="spyglass",
        description="Internet intelligence in the terminal. With no command: the dashboard.",
        parents=[common.profile, common.data, common.pane],
    )
    parser.add_argument("--version", action="version", version=f"spyglass {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=Parser)
    for family in FAMILIES:
        importlib.import_module(f"spyglass.cli.commands.{family}").register(sub, common)
    from spyglass.cli.commands.dashboard import dashboard_command

    parser.set_defaults(func=dashboard_command)  # no command: the dashboard
    return parser


def parse(argv: list[str] | None) -> argparse.Namespace:
    from spyglass.cli.common import fill_defaults

    if not (sys.argv[1:] if argv is None else argv):
        # Plain `spyglass`, the usual start: the dashboard, without first building every command's
        # parser and importing its module (bench/startup.py times the start against a bare Textual app).
        from spyglass.cli.commands.dashboard import dashboard_command

        return fill_defaults(argparse.Namespace(func=dashboard_command))
    Parser.given = argv or sys.argv[1:]
    args = build_parser().parse_args([_NEGATED + a if _negated_filter(a) else a for a in Parser.given])
    for name, value in vars(args).items():  # the marks taken off again, wherever an action put them
        setattr(args, name, _unmarked(value))
    return fill_defaults(args)


def _unmarked(value: object) -> object:
    if isinstance(value, str):
        return value.removeprefix(_NEGATED)
    if isinstance(value, (list, tuple)):
        return type(value)(_unmarked(v) for v in value)
    return value


_NEGATED = "\x00"  # before "-port:22", so that argparse reads it as a query, not an option


def _negated_filter(arg: str) -> bool:
    """Whether ``arg`` is a query of one negated filter (``-port:22``), which argparse took for an
    option and then said the query was missing (newcomer trial 2)."""
    from spyglass.query import FILTERS

    name, colon, _ = arg[1:].partition(":")
    return arg.startswith("-") and not arg.startswith("--") and bool(colon) and name.lower() in FILTERS


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already reported
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    sigterm = signal.getsignal(signal.SIGTERM)  # a command may stop on it as on ctrl+c (exits.py)
    try:
        return _run(args)
    finally:
        if signal.getsignal(signal.SIGTERM) is not sigterm:  # (main() called in a process that goes on)
            signal.signal(signal.SIGTERM, sigterm)


def _run(args: argparse.Namespace) -> int:
    try:
        result = args.func(args)
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        return result
    except KeyboardInterrupt as exc:  # ctrl+c (or kill: Terminated): what it left, where the command says
        left = getattr(args, "on_interrupt", None)
        print(f"\nspyglass: stopped{': ' + left if left else ''}", file=sys.stderr)
        return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
    except BrokenPipeError:  # the reader went away (| head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except UsageError as exc:
        return fail(str(exc), EXIT_USAGE)
    except OSError as exc:  # a path given or configured (data dir, output) that cannot be used
        if exc.filename is None:
            return fail(str(exc), EXIT_FAILURE)
        # a folder asked for where a file is (--data FILE): strerror says only "File exists"
        why = "it is a file, not a folder" if isinstance(exc, FileExistsError) else exc.strerror or exc
        return fail(f"cannot use {exc.filename}: {why}", EXIT_USAGE)
    except Exception as exc:  # every failure a user can meet becomes one line and an exit code
        from spyglass.client.errors import SpyglassError
        from spyglass.config import ConfigError
        from spyglass.local.launcher import BackendFailed

        if isinstance(exc, (SpyglassError, BackendFailed, ConfigError, ValueError)):
            return fail(str(exc), exit_code_for(exc))
        raise
