"""The backend's state itself: state init (create or upgrade a PostgreSQL state's tables) and state
copy (an embedded backend's state into PostgreSQL)."""

from __future__ import annotations

import argparse
from pathlib import Path

from spyglass.cli.common import Common, state_address
from spyglass.cli.exits import EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE, fail


def init_command(args: argparse.Namespace) -> int:
    from spyglass.server.banners.store import StoreUnavailable
    from spyglass.server.extras import ExtraMissing, require

    address = state_address(args)
    if not address:
        return fail("state init: name a PostgreSQL state with --state or $SPYGLASS_STATE", EXIT_USAGE)
    try:
        require("postgres")
    except ExtraMissing as exc:
        return fail(f"state init: {exc}", EXIT_UNAVAILABLE)
    from spyglass.server.state.postgres import shown
    from spyglass.server.state.postgres.schema import init_schema

    try:
        version = init_schema(address)
    except StoreUnavailable as exc:
        return fail(f"state init: {exc}", EXIT_UNAVAILABLE)
    except ValueError as exc:  # no address, refused credentials, a schema newer than we know
        return fail(f"state init: {exc}", EXIT_USAGE)
    print(f"{shown(address)}: tables ready, schema version {version}")
    return EXIT_OK


def copy_command(args: argparse.Namespace) -> int:
    from spyglass.server.banners.store import StoreUnavailable
    from spyglass.server.extras import ExtraMissing, require

    address = state_address(args)
    if not address:
        return fail("state copy: name the PostgreSQL state to copy into with --state or $SPYGLASS_STATE", EXIT_USAGE)
    try:
        require("postgres")
    except ExtraMissing as exc:
        return fail(f"state copy: {exc}", EXIT_UNAVAILABLE)
    from spyglass.server.state.copy import copy_state
    from spyglass.server.state.postgres import shown

    try:
        copied = copy_state(args.source, address)
    except StoreUnavailable as exc:
        return fail(f"state copy: {exc}", EXIT_UNAVAILABLE)
    except (ValueError, OSError) as exc:  # no state there, refused credentials, a state in use already
        return fail(f"state copy: {exc}", EXIT_USAGE)
    rows = ", ".join(f"{n:,} {table}" for table, n in copied.tables.items())
    print(f"{args.source} -> {shown(address)}: {rows}")
    return EXIT_OK


def register(sub, common: Common) -> None:
    p = sub.add_parser("state", help="the backend's state on PostgreSQL", description="The backend's state.")
    family = p.add_subparsers(metavar="ACTION", parser_class=type(p))
    p.set_defaults(func=common.usage(p))
    init = family.add_parser(
        "init",
        parents=[common.state],
        help="create a PostgreSQL state's tables, or upgrade them",
        description="Create the tables of the PostgreSQL state named by --state or $SPYGLASS_STATE "
        "(accounts, keys, credits, organizations, alerts, deliveries, scans, saved queries) where they are "
        "missing, or bring them "
        "to this spyglass's schema version. The backend does the same when it starts.",
    )
    init.set_defaults(func=init_command)
    copy = family.add_parser(
        "copy",
        parents=[common.state],
        help="copy an embedded backend's state into a fresh PostgreSQL state",
        description="Copy the state of the embedded backend in DATA_DIR (accounts, keys, credits, "
        "organizations, invitations, scans, saved queries, alerts, notifiers and their deliveries) into "
        "the PostgreSQL state named by --state or $SPYGLASS_STATE, which must hold none yet. Keys keep "
        "working; stop that backend first. Banners move with spyglass import.",
    )
    copy.add_argument("--from", dest="source", type=Path, required=True, metavar="DATA_DIR", help="its --data")
    copy.set_defaults(func=copy_command)
