"""The Textual dashboard: ``spyglass`` with no command, or ``spyglass dashboard``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from spyglass.cli.common import Common

if TYPE_CHECKING:
    from spyglass.local.launcher import EmbeddedBackend


def dashboard_command(args: argparse.Namespace) -> int:
    pane, arg = args.pane or (None, None)
    started = start_backend(args.profile, args.data, pane)
    from spyglass.tui.app import run_dashboard  # Textual loads while the backend starts
    from spyglass.tui.pastesafe import install

    install()  # pasted text stays text: before the terminal's keys are read
    return run_dashboard(args.profile, args.data, pane=pane, arg=arg, started=started)


def start_backend(profile_name: str | None, data: Path | None, pane: str | None) -> EmbeddedBackend | None:
    """The embedded backend, started before the dashboard's modules load (Textual's import is slow):
    on a first start it answers that much sooner. None where the dashboard will not run, uses another
    service, or could not start it (it then tries itself, and says why in its status bar)."""
    from spyglass.config import active_profile
    from spyglass.tui.panes import pane_ids  # names only

    if (pane is not None and pane not in pane_ids()) or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    try:
        profile = active_profile(profile_name)
        if not profile.embedded:
            return None
        from spyglass.local.launcher import EmbeddedBackend

        backend = EmbeddedBackend.for_profile(profile, data)
        backend.start()
    except Exception:  # a broken config or data dir: the dashboard meets it again and shows it
        return None
    return backend


def register(sub, common: Common) -> None:
    p = sub.add_parser(
        "dashboard",
        parents=[common.profile, common.data, common.pane],
        help="open the dashboard (the default with no command)",
        description="Open the dashboard; --pane opens it on one pane with its input filled in and run.",
    )
    p.set_defaults(func=dashboard_command)
