"""The organization (enterprise): org, org add USER [--notify], org remove USER."""

from __future__ import annotations

import argparse

from spyglass.cli.common import Common, api_command


def user(text: str) -> str:
    """USER: a username or e-mail address; an empty one would reach no route at all (a 404)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("a username or e-mail address is required")
    return text.strip()


async def show(clients, args):
    from spyglass.cli.render import print_lines, print_pairs
    from spyglass.present.data import table
    from spyglass.present.org import facts, people_rows

    org = await clients.org.get()
    if args.json:
        return org
    print_pairs(facts(org))
    print()
    print_lines(table(people_rows(org)) or ["no admins or members"])


async def add(clients, args):
    from spyglass.safetext import clean

    await clients.org.add_member(args.user, notify=args.notify)
    if args.json:
        return {"success": True}
    print(f"added {clean(args.user, one_line=True)}" + (" and e-mailed them" if args.notify else ""))


async def remove(clients, args):
    from spyglass.safetext import clean

    await clients.org.remove_member(args.user)
    if args.json:
        return {"success": True}
    print(f"removed {clean(args.user, one_line=True)}")


def register(sub, common: Common) -> None:
    org = sub.add_parser(
        "org",
        parents=common.api,
        help="the organization and its members (enterprise)",
        description="The account's organization: its facts, admins and members. Admins add and remove members.",
    )
    org.set_defaults(func=api_command(show))
    actions = org.add_subparsers(metavar="ACTION", parser_class=type(org))
    p = actions.add_parser(
        "add",
        parents=common.api,
        help="add an existing user as a member",
        description="Add an existing user, by username or e-mail address, as a member.",
    )
    p.add_argument("user", metavar="USER", type=user, help="username or e-mail address")
    p.add_argument("--notify", action="store_true", help="e-mail them (the server's SMTP server)")
    p.set_defaults(func=api_command(add))
    p = actions.add_parser("remove", parents=common.api, help="remove a member", description="Remove a member.")
    p.add_argument("user", metavar="USER", type=user, help="username or e-mail address")
    p.set_defaults(func=api_command(remove))
