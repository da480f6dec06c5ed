"""The Textual dashboard: ``spyglass`` with no command, or ``spyglass dashboard``."""

from __future__ import annotations

import argparse

from spyglass.cli.common import Common


def dashboard_command(args: argparse.Namespace) -> int:
    from spyglass.tui.app import run_dashboard

    pane, arg = args.pane or (None, None)
    return run_dashboard(args.profile, args.data, pane=pane, arg=arg)


def register(sub, common: Common) -> None:
    p = sub.add_parser(
        "dashboard",
        parents=[common.profile, common.data, common.pane],
        help="open the dashboard (the default with no command)",
        description="Open the dashboard; --pane opens it on one pane with its input filled in and run.",
    )
    p.set_defaults(func=dashboard_command)
