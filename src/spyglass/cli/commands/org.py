"""The organization (enterprise): org, org add USER [--notify], org remove USER, and the invitations
this account has: org invitations, org accept ORG_ID [--decline]."""

from __future__ import annotations

import argparse

from spyglass.cli.common import Common, api_command


def user(text: str) -> str:
    """USER: a username or e-mail address; an empty one would reach no route at all, and one with
    a '/' a 404 that spoke of paths (`org add ../x`: a newcomer's minor)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("a username or e-mail address is required")
    if "/" in text:
        raise argparse.ArgumentTypeError(f"{text.strip()!r}: no username or e-mail address holds a '/'")
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
    print(
        f"invited {clean(args.user, one_line=True)} (if that user can join): they become a member when they accept"
        + (", e-mailed" if args.notify else "")
    )


async def invitations(clients, args):
    from spyglass.cli.render import print_lines
    from spyglass.safetext import clean

    found = await clients.org.invitations()
    if args.json:
        return found
    lines = [f"{i.id}  {clean(i.name, one_line=True)}  (invited {i.invited[:10]})" for i in found]
    print_lines(lines or ["no invitations"])


async def accept(clients, args):
    await clients.org.accept(args.org_id, accept=not args.decline)
    if args.json:
        return {"success": True}
    print(("declined " if args.decline else "joined ") + args.org_id)


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
        help="invite a user to become a member",
        description="Invite a user, by username or e-mail address: they become a member when they accept "
        "(spyglass org accept). The answer is the same whether or not the user exists or can join.",
    )
    p.add_argument("user", metavar="USER", type=user, help="username or e-mail address")
    p.add_argument("--notify", action="store_true", help="e-mail them (the server's SMTP server)")
    p.set_defaults(func=api_command(add))
    p = actions.add_parser("remove", parents=common.api, help="remove a member", description="Remove a member.")
    p.add_argument("user", metavar="USER", type=user, help="username or e-mail address")
    p.set_defaults(func=api_command(remove))
    text = "the organizations that invited this account"
    actions.add_parser("invitations", parents=common.api, help=text, description=text).set_defaults(
        func=api_command(invitations)
    )
    p = actions.add_parser(
        "accept", parents=common.api, help="join an organization that invited you", description="Join (or decline)."
    )
    p.add_argument("org_id", metavar="ORG_ID")
    p.add_argument("--decline", action="store_true", help="decline the invitation instead")
    p.set_defaults(func=api_command(accept))
