"""Named connection profiles: profile list, add, use, remove."""

from __future__ import annotations

import argparse

from spyglass import DEFAULT_NAMESPACE
from spyglass.cli.common import Common
from spyglass.cli.exits import EXIT_OK, EXIT_USAGE, fail


def profile_command(args: argparse.Namespace) -> int:
    from spyglass.config import EMBEDDED, PRESETS, Config, ConfigError, Profile

    config = Config.load()
    if args.action == "list":
        for name in sorted(set(config.profiles) | {EMBEDDED}):
            mark = "*" if name == config.active else " "
            print(f"{mark} {config.profile(name).describe()}")
        return EXIT_OK
    if args.action == "add":
        given = {f: getattr(args, f) for f in ("url", "stream_url", "trends_url", "geonet_url", "namespace")}
        values = {**PRESETS.get(args.preset or "", {}), **{f: v for f, v in given.items() if v}}
        if not values.get("url"):
            return fail("profile add: give --url, or --preset (" + ", ".join(PRESETS) + ")", EXIT_USAGE)
        try:
            config.profiles[args.name] = Profile(name=args.name, key=args.key, rate=args.rate or None, **values)
        except ConfigError as exc:
            return fail(f"invalid profile: {exc}", EXIT_USAGE)
    elif args.action == "use":
        if args.name not in config.profiles and args.name != EMBEDDED:
            return fail(f"no profile named {args.name!r}", EXIT_USAGE)
        config.active = args.name
    elif args.action == "remove":
        if config.profiles.pop(args.name, None) is None:
            return fail(
                f"no profile named {args.name!r}"
                + (" (the embedded one cannot be removed)" if args.name == EMBEDDED else ""),
                EXIT_USAGE,
            )
        if config.active == args.name:
            config.active = EMBEDDED
    config.save()
    return EXIT_OK


def register(sub, common: Common) -> None:
    from spyglass.config import PRESETS

    top = sub.add_parser(
        "profile",
        help="named connection profiles",
        description="Named connection profiles, in config.json under $SPYGLASS_CONFIG_DIR "
        "(mode 0600). The profile 'embedded' is the local backend.",
    )
    top.set_defaults(func=common.usage(top))
    actions = top.add_subparsers(metavar="ACTION", parser_class=type(top))
    actions.add_parser(
        "list", help="list profiles; * marks the active one", description="List profiles; * marks the active one."
    ).set_defaults(func=profile_command, action="list")
    p = actions.add_parser("add", help="add or replace a profile", description="Add or replace a profile.")
    p.add_argument("name")
    p.add_argument("--url", help="main API base URL")
    p.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        help="the four hosts and the namespace of a known service (shodan: the original service)",
    )
    p.add_argument("--key")
    p.add_argument("--stream-url")
    p.add_argument("--trends-url")
    p.add_argument("--geonet-url")
    p.add_argument("--namespace", help=f"the paths' first part (default {DEFAULT_NAMESPACE}, or the preset's)")
    p.add_argument("--rate", type=float, default=1.0, help="client-side requests per second (0: unpaced)")
    p.set_defaults(func=profile_command, action="add")
    for action, text in (
        ("use", "make a profile the active one"),
        ("remove", "remove a profile (the embedded one is used if it was active)"),
    ):
        p = actions.add_parser(action, help=text, description=text[0].upper() + text[1:] + ".")
        p.add_argument("name")
        p.set_defaults(func=profile_command, action=action)
