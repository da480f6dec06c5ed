"""The banner store itself: store init (create a ClickHouse store's database and tables)."""

from __future__ import annotations

import argparse

from spyglass.cli import EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE, fail
from spyglass.cli.common import Common, store_address


def init_command(args: argparse.Namespace) -> int:
    from spyglass.config import data_dir
    from spyglass.server.bannerstore import StoreUnavailable, open_banner_store
    from spyglass.server.clickhouse import shown

    address = store_address(args)
    if not address:
        return fail("store init: name a ClickHouse store with --store or $SPYGLASS_STORE", EXIT_USAGE)
    try:
        store = open_banner_store(address, args.data or data_dir())  # creates what is missing
    except StoreUnavailable as exc:
        return fail(f"store init: {exc}", EXIT_UNAVAILABLE)
    except ValueError as exc:
        return fail(f"store init: {exc}", EXIT_USAGE)
    try:
        print(f"{shown(address)}: tables ready, {store.total():,} banners")
    finally:
        store.close()
    return EXIT_OK


def register(sub, common: Common) -> None:
    p = sub.add_parser("store", help="the banner store (ClickHouse)", description="The banner store.")
    family = p.add_subparsers(metavar="ACTION", parser_class=type(p))
    p.set_defaults(func=common.usage(p))
    init = family.add_parser(
        "init",
        parents=[common.store, common.data],
        help="create a ClickHouse store's database and tables (on every shard of its cluster)",
        description="Create the database and tables of the ClickHouse store named by --store or "
        "$SPYGLASS_STORE where they are missing: on one server, or with ?cluster=NAME the local tables "
        "on every shard the server's system.clusters lists and a Distributed table over them. The "
        "backend does the same when it starts.",
    )
    init.set_defaults(func=init_command)
