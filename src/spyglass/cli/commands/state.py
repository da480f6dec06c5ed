"""The backend's state itself: state init (create or upgrade a PostgreSQL state's tables)."""

from __future__ import annotations

import argparse

from spyglass.cli.common import Common, state_address
from spyglass.cli.exits import EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE, fail


def init_command(args: argparse.Namespace) -> int:
    from spyglass.server.banners.store import StoreUnavailable
    from spyglass.server.postgres import shown
    from spyglass.server.postgres.schema import init_schema

    address = state_address(args)
    if not address:
        return fail("state init: name a PostgreSQL state with --state or $SPYGLASS_STATE", EXIT_USAGE)
    try:
        version = init_schema(address)
    except StoreUnavailable as exc:
        return fail(f"state init: {exc}", EXIT_UNAVAILABLE)
    except ValueError as exc:  # no address, refused credentials, a schema newer than we know
        return fail(f"state init: {exc}", EXIT_USAGE)
    print(f"{shown(address)}: tables ready, schema version {version}")
    return EXIT_OK


def register(sub, common: Common) -> None:
    p = sub.add_parser("state", help="the backend's state (accounts on PostgreSQL)", description="The backend's state.")
    family = p.add_subparsers(metavar="ACTION", parser_class=type(p))
    p.set_defaults(func=common.usage(p))
    init = family.add_parser(
        "init",
        parents=[common.state],
        help="create a PostgreSQL state's tables, or upgrade them",
        description="Create the tables of the PostgreSQL state named by --state or $SPYGLASS_STATE "
        "(accounts, keys, credits, organizations, invitations) where they are missing, or bring them "
        "to this spyglass's schema version. The backend does the same when it starts.",
    )
    init.set_defaults(func=init_command)
