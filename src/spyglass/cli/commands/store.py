"""The banner store itself: store init (create a ClickHouse store's database and tables), store
copy (every banner of an embedded data dir into a ClickHouse store)."""

from __future__ import annotations

import argparse

from spyglass.cli.common import Common, open_store, store_address
from spyglass.cli.exits import EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE, fail

COPY_BATCH = 5000


def init_command(args: argparse.Namespace) -> int:
    from spyglass.config import data_dir
    from spyglass.progress import Progress
    from spyglass.server.clickhouse import StoreURLError, shown
    from spyglass.server.clickhouse.upgrade import upgrade
    from spyglass.server.extras import ExtraMissing, require

    address = store_address(args)
    if not address:
        return fail("store init: name a ClickHouse store with --store or $SPYGLASS_STORE", EXIT_USAGE)
    try:
        require("clickhouse")
    except ExtraMissing as exc:
        return fail(f"store init: {exc}", EXIT_UNAVAILABLE)
    progress = Progress("upgrade")
    try:  # tables of an earlier version's layout: their banners copied into the current ones
        said = upgrade(address, lambda copied: progress.update(None, f"{copied:,} banners copied"))
    except StoreURLError as exc:
        return fail(f"store init: {exc}", EXIT_USAGE)
    except Exception as exc:  # the driver's network, server and auth errors; the upgrade's own
        return fail(f"store init: cannot use the banner store at {shown(address)}: {exc}", EXIT_UNAVAILABLE)
    if said:
        progress.done(said)
    store = open_store(args, "store init", args.data or data_dir())  # creates what is missing
    if isinstance(store, int):
        return store
    try:
        demoted, deleted = store.repair()  # what writers stopped part way left
        put_right = f"; put right: {demoted:,} demoted, {deleted:,} copies deleted" if demoted or deleted else ""
        print(f"{shown(address)}: tables ready, {store.total():,} banners{put_right}")
    finally:
        store.close()
    return EXIT_OK


def copy_command(args: argparse.Namespace) -> int:
    """Every banner of the embedded store in --data, byte for byte, into the store --store names
    (what is there already is skipped: a copy cut short is finished by running it again), and
    what imported scans saw besides banners (hosts up, ports not open: banners/seen.py)."""
    from spyglass.config import data_dir
    from spyglass.exactjson import loads
    from spyglass.progress import Progress
    from spyglass.server.banners.shape import BadBanner
    from spyglass.server.banners.store import StoreUnavailable
    from spyglass.server.index import BannerIndex

    address = store_address(args)
    source_dir = args.data or data_dir()
    if not address:
        return fail("store copy: name the ClickHouse store to copy into with --store or $SPYGLASS_STORE", EXIT_USAGE)
    if not (source_dir / "banners.db").is_file():
        return fail(f"store copy: {source_dir} holds no embedded banner store (banners.db)", EXIT_USAGE)
    target = open_store(args, "store copy", source_dir)
    if isinstance(target, int):
        return target
    source = BannerIndex(source_dir)
    progress = Progress("copy")
    total, seen, added, skipped, states = source.total(), 0, 0, 0, 0
    try:
        with target.writing() as batch:
            for rows in source.added_since(0, COPY_BATCH):
                prepared = []
                for body in source.raw_bodies([mark for mark, _ in rows]).values():
                    try:
                        prepared.append(target.prepare(loads(body), body))
                    except BadBanner:  # kept by an older layout's rules: nothing to file it by
                        skipped += 1
                added += len(batch.add(prepared))
                seen += len(rows)
                progress.update(seen / (total or 1), f"{seen:,} of {total:,} read, {added:,} new")
        for found in source.all_seen(COPY_BATCH):
            states += target.add_seen(found)
    except StoreUnavailable as exc:
        progress.done("stopped")
        return fail(f"store copy: {exc}; run the same copy again to finish it", EXIT_UNAVAILABLE)
    finally:
        source.close()
        target.close()
    unreadable = f", {skipped:,} unreadable skipped" if skipped else ""
    scans = f"; {states:,} rows of hosts and ports scans saw copied" if states else ""
    progress.done(f"{added:,} banners copied, {seen - added - skipped:,} were there already{unreadable}{scans}")
    return EXIT_OK


def register(sub, common: Common) -> None:
    p = sub.add_parser("store", help="the banner store (ClickHouse)", description="The banner store.")
    family = p.add_subparsers(metavar="ACTION", parser_class=type(p))
    p.set_defaults(func=common.usage(p))
    init = family.add_parser(
        "init",
        parents=[common.store, common.data],
        help="create a ClickHouse store's database and tables (on every shard of its cluster), or upgrade them",
        description="Create the database and tables of the ClickHouse store named by --store or "
        "$SPYGLASS_STORE where they are missing: on one server, or with ?cluster=NAME the local tables "
        "on every shard the server's system.clusters lists and a Distributed table over them. The "
        "backend does the same when it starts. Tables an earlier version of spyglass made are upgraded: "
        "every banner copied into the current tables, byte for byte (the backend refuses them until then). "
        "Then it puts right what writers stopped part way left (killed, or the server gone between their "
        "inserts): one current banner a service, each banner once, each current banner searchable.",
    )
    init.set_defaults(func=init_command)
    copy = family.add_parser(
        "copy",
        parents=[common.store, common.data],
        help="copy every banner of an embedded data dir (--data) into a ClickHouse store",
        description="Copy every banner of the embedded store in --data (byte for byte) into the ClickHouse "
        "store --store or $SPYGLASS_STORE names; banners it holds already are skipped, so a copy cut "
        "short is finished by running it again. What imported scans saw besides banners (hosts up, ports "
        "closed or filtered) is copied too. Accounts, alerts, scans and the directory stay in the "
        "data dir's own files.",
    )
    copy.set_defaults(func=copy_command)
