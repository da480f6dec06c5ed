"""The account and its keys: info, account, myip, headers, keys create."""

from __future__ import annotations

import argparse
import re

from spyglass.cli.common import Common, api_command
from spyglass.cli.exits import EXIT_OK
from spyglass.cli.render import print_pairs
from spyglass.present.values import moment, yes_no

EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")  # enough to catch a slip; the address is only ever mailed to
USERNAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def username(text: str) -> str:
    """An argparse type: letters, digits, dot, dash and underscore (it appears in paths and mail)."""
    if not USERNAME.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r}: use letters, digits, '.', '-' and '_' (at most 64)")
    return text


def display_name(text: str) -> str:
    """An argparse type: a name shown to people, one line of printable text."""
    if not text.strip() or len(text) > 100 or not text.isprintable():
        raise argparse.ArgumentTypeError(f"{text!r}: one line of printable text (at most 100 characters)")
    return text


def _number(n: object) -> str:
    """A count as the dashboard and ``count`` write it: 999,990."""
    return f"{n:,}" if isinstance(n, int) and not isinstance(n, bool) else ("-" if n is None else str(n))


def _of(left: object, limit: object) -> str:
    return _number(left) + (f" of {_number(limit)}" if limit is not None else "")


BUDGETS = (  # the plan's budgets, as the server says them (usage_limits)
    ("facets a request", "facets"),
    ("values a facet", "facet_size"),
    ("notifiers", "notifiers"),
    ("notifier tests an hour", "notifier_tests"),
    ("saved queries", "saved_queries"),
    ("saved queries an hour", "saved_queries_hour"),
    ("directory search words", "directory_words"),
    ("characters a search word", "directory_word_length"),
    ("internet scans at once", "internet_scans"),
    ("scans an hour", "scans_hour"),
    ("alert networks an hour", "alert_networks_hour"),
    ("ignored services an alert", "alert_ignores"),
    ("requests at once", "requests_at_once"),
)


async def info(clients, args):
    result = await clients.account.api_info()
    if args.json:
        return result
    limits = result.usage_limits
    print_pairs(
        [
            ("plan", result.plan),
            ("query credits", _of(result.query_credits, limits.query_credits if limits else None)),
            ("scan credits", _of(result.scan_credits, limits.scan_credits if limits else None)),
            ("monitored IPs", _number(result.monitored_ips)),
            ("unlocked", yes_no(result.unlocked)),
            ("https", yes_no(result.https)),
            ("telnet", yes_no(result.telnet)),
            *((label, _number(getattr(limits, name))) for label, name in BUDGETS if getattr(limits, name, None)),
        ]
    )


async def account(clients, args):
    profile = await clients.account.profile()
    if args.json:
        return profile
    print_pairs(
        [
            ("name", profile.display_name or "-"),
            ("member", yes_no(profile.member)),
            ("credits", _number(profile.credits)),
            ("created", moment(profile.created)),
        ]
    )


async def myip(clients, args):
    ip = await clients.tools.my_ip()
    return ip if args.json else print_pairs([("ip", ip)])


async def headers(clients, args):
    result = await clients.tools.http_headers()
    return result if args.json else print_pairs(sorted(result.items()))


def keys_create(args: argparse.Namespace) -> int:
    from pathlib import Path

    from spyglass.cli.common import state_address
    from spyglass.cli.exits import EXIT_UNAVAILABLE, EXIT_USAGE, fail
    from spyglass.config import data_dir
    from spyglass.server.banners.store import StoreUnavailable
    from spyglass.server.state.accounts import AccountExists, StateURLError
    from spyglass.server.state.sqlite.database import DiskFull, full_disk_said
    from spyglass.server.stores import open_account_state

    if args.email is not None and not EMAIL.fullmatch(args.email):
        return fail(f"keys create: --email {args.email!r} is not an e-mail address", EXIT_USAGE)
    data = Path(args.data or data_dir())
    try:
        with full_disk_said(data):
            store = open_account_state(state_address(args), data)
            try:
                key = store.create_key(
                    args.plan,
                    researcher=args.researcher,
                    collector=args.collector,
                    username=args.user,
                    email=args.email,
                    display_name=args.name,
                )
            finally:
                store.close()
    except (AccountExists, StateURLError) as exc:
        return fail(f"keys create: {exc}", EXIT_USAGE)
    except (DiskFull, StoreUnavailable) as exc:
        return fail(f"keys create: {exc}", EXIT_UNAVAILABLE)
    print(key)
    return EXIT_OK


def register(sub, common: Common) -> None:
    for name, handler, text in (
        ("info", info, "plan, credits and usage limits"),
        ("account", account, "the account profile"),
        ("myip", myip, "your address as the server sees it"),
        ("headers", headers, "the headers your client sent"),
    ):
        sub.add_parser(name, help=text, description=text, parents=common.api).set_defaults(func=api_command(handler))

    keys = sub.add_parser(
        "keys", help="API keys of the embedded backend", description="API keys of the embedded backend"
    )
    keys.set_defaults(func=common.usage(keys))
    actions = keys.add_subparsers(metavar="ACTION", parser_class=type(keys))
    p = actions.add_parser(
        "create",
        parents=[common.data, common.state],
        help="create an account and print its new key",
        description="Create an account in the embedded backend's data and print its key, and nothing else, on stdout.",
    )
    p.add_argument("--plan", choices=["free", "member", "enterprise"], default="free")
    p.add_argument("--researcher", action="store_true", help="may scan the whole internet")
    p.add_argument(
        "--collector",
        action="store_true",
        help="may collect banners (spyglass replay, POST /spyglass/collect): every account sees them",
    )
    p.add_argument("--user", type=username, metavar="NAME", help="the account's username (default: a random one)")
    p.add_argument("--email", metavar="E", help="the account's e-mail address (organizations, notifications)")
    p.add_argument("--name", type=display_name, metavar="TEXT", help="the name the account shows (default: --user's)")
    p.set_defaults(func=keys_create)
