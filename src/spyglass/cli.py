"""The ``spyglass`` command: the dashboard with no arguments, otherwise scriptable commands.

Exit codes: 0 success, 1 unexpected failure, 2 bad input or usage, 3 key, plan or credits,
4 not found, 5 connection, timeout, rate limit or server failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from spyglass import DEFAULT_NAMESPACE, __version__

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_ACCESS, EXIT_NOT_FOUND, EXIT_UNAVAILABLE = 0, 1, 2, 3, 4, 5


def exit_code_for(exc: BaseException) -> int:
    from spyglass.client import errors as e

    for classes, code in (
        ((e.BadRequest,), EXIT_USAGE),
        ((e.AuthenticationError, e.Forbidden, e.NoCredits), EXIT_ACCESS),
        ((e.NotFound,), EXIT_NOT_FOUND),
        ((e.TransportError, e.RateLimited, e.ServerError, e.ResponseFormatError), EXIT_UNAVAILABLE),
    ):
        if isinstance(exc, classes):
            return code
    return EXIT_FAILURE


def fail(message: str, code: int) -> int:
    from spyglass.safetext import clean

    print(f"spyglass: {clean(message, one_line=True)}", file=sys.stderr)
    return code


# -- commands that talk to an API ---------------------------------------------------------------
async def with_clients(args: argparse.Namespace, work: Callable[[Any], Awaitable[int]]) -> int:
    """Run ``work(clients)`` against the chosen profile, starting the embedded backend if needed."""
    from spyglass.client import Clients
    from spyglass.config import active_profile

    profile = active_profile(args.profile)
    backend = None
    if profile.embedded:
        from spyglass.server.launcher import EmbeddedBackend

        backend = EmbeddedBackend(args.data, profile.namespace)
        profile = backend.start()
        await backend.wait_ready()
    try:
        async with Clients.from_profile(profile) as clients:
            return await work(clients)
    finally:
        if backend:
            backend.stop()


def print_json(value: Any) -> None:
    if hasattr(value, "to_api"):
        value = value.to_api()
    # JSON escapes every control character, so untrusted text stays inert.
    print(json.dumps(value, indent=2, ensure_ascii=False))


def print_pairs(pairs: list[tuple[str, Any]]) -> None:
    from spyglass.safetext import clean

    width = max(len(k) for k, _ in pairs)
    for name, value in pairs:
        print(f"{name:<{width}}  {clean(value, one_line=True)}")


def api_command(render: Callable[[Any, argparse.Namespace], Awaitable[Any]]):
    async def run(args: argparse.Namespace) -> int:
        async def work(clients) -> int:
            result = await render(clients, args)
            if result is not None:
                print_json(result)
            return EXIT_OK

        return await with_clients(args, work)

    return run


async def _info(clients, args):
    info = await clients.intel.api_info()
    if args.json:
        return info
    limits = info.usage_limits
    print_pairs([
        ("plan", info.plan),
        ("query credits", f"{info.query_credits}" + (f" of {limits.query_credits}" if limits else "")),
        ("scan credits", f"{info.scan_credits}" + (f" of {limits.scan_credits}" if limits else "")),
        ("monitored IPs", info.monitored_ips if info.monitored_ips is not None else "-"),
        ("unlocked", info.unlocked), ("https", info.https), ("telnet", info.telnet),
    ])


async def _account(clients, args):
    profile = await clients.intel.profile()
    if args.json:
        return profile
    print_pairs([("name", profile.display_name or "-"), ("member", profile.member),
                 ("credits", profile.credits), ("created", profile.created or "-")])


async def _myip(clients, args):
    ip = await clients.intel.my_ip()
    return ip if args.json else print_pairs([("ip", ip)])


async def _headers(clients, args):
    headers = await clients.intel.http_headers()
    return headers if args.json else print_pairs(sorted(headers.items()))


def _ping_rows(results) -> None:
    from spyglass.safetext import clean

    for r in results:
        where = clean(f"{r.from_loc.city}, {r.from_loc.country}", one_line=True)
        if r.error:
            print(f"{where:<28} {clean(r.error, one_line=True)}")
        elif not r.is_alive:
            print(f"{where:<28} no reply from {r.ip} ({r.packets_sent} sent)")
        else:
            print(f"{where:<28} {r.ip}  min {r.min_rtt:.2f}  avg {r.avg_rtt:.2f}  max {r.max_rtt:.2f} ms"
                  f"  loss {r.packet_loss:.0%}")


def _dns_rows(results) -> None:
    from spyglass.safetext import clean

    for r in results:
        where = clean(f"{r.from_loc.city}, {r.from_loc.country}", one_line=True)
        values = ", ".join(f"{a.type} {a.value}" for a in r.answers) or (r.status or "no answer")
        print(f"{where:<28} {clean(values, one_line=True)}")


def _missing_rows(results) -> None:
    from spyglass.safetext import clean

    for m in getattr(results, "missing", []):
        print(clean(f"{m.agent}: no result ({m.reason})", one_line=True), file=sys.stderr)


async def _ping(clients, args):
    result = await clients.geonet.ping(args.target)
    return result if args.json else _ping_rows([result])


async def _geoping(clients, args):
    results = await clients.geonet.geoping(args.target)
    _missing_rows(results)
    return [r.to_api() for r in results] if args.json else _ping_rows(results)


async def _dns(clients, args):
    result = await clients.geonet.dns(args.target, args.rtype)
    return result if args.json else _dns_rows([result])


async def _geodns(clients, args):
    results = await clients.geonet.geodns(args.target, args.rtype)
    _missing_rows(results)
    return [r.to_api() for r in results] if args.json else _dns_rows(results)


# -- local commands ------------------------------------------------------------------------------
def cmd_serve(args: argparse.Namespace) -> int:
    import socket

    from spyglass.config import data_dir
    from spyglass.server.geonet import GeonetSettings, parse_location
    from spyglass.server.runner import serve

    geonet = GeonetSettings(peers=args.peer, deadline=args.geonet_deadline)
    try:
        if args.location:
            geonet.location = parse_location(args.location)
        if args.nameserver:
            from spyglass.netools.dns import parse_nameserver

            servers = [parse_nameserver(ns) for ns in args.nameserver]
            geonet.nameservers = [host for host, _ in servers]
            geonet.dns_port = servers[0][1]  # dnspython uses one port for all of them
    except ValueError as exc:
        return fail(f"serve: {exc}", EXIT_USAGE)
    sock = socket.socket(fileno=args.fd) if args.fd is not None else None
    try:
        serve(args.data or data_dir(), host=args.host, port=args.port, namespace=args.namespace,
              rate_limit=args.rate_limit, geonet=geonet, geonet_only=args.geonet_only, sock=sock,
              exit_on_stdin_eof=args.exit_on_stdin_eof, announce=lambda line: print(line, flush=True))
    except OSError as exc:
        return fail(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}", EXIT_UNAVAILABLE)
    return EXIT_OK


def cmd_keys_create(args: argparse.Namespace) -> int:
    from spyglass.config import data_dir
    from spyglass.server.store import Store

    store = Store(args.data or data_dir())
    try:
        print(store.create_key(args.plan, researcher=args.researcher))
    finally:
        store.close()
    return EXIT_OK


def cmd_profile(args: argparse.Namespace) -> int:
    from spyglass.config import Config, ConfigError, Profile

    config = Config.load()
    if args.action == "list":
        names = sorted(set(config.profiles) | {"embedded"})
        for name in names:
            mark = "*" if name == config.active else " "
            print(f"{mark} {config.profile(name).describe()}")
        return EXIT_OK
    if args.action == "add":
        try:
            config.profiles[args.name] = Profile(
                name=args.name, url=args.url, stream_url=args.stream_url, trends_url=args.trends_url,
                geonet_url=args.geonet_url, key=args.key, namespace=args.namespace,
                rate=args.rate or None)
        except ConfigError as exc:
            return fail(f"invalid profile: {exc}", EXIT_USAGE)
    elif args.action == "use":
        if args.name not in config.profiles and args.name != "embedded":
            return fail(f"no profile named {args.name!r}", EXIT_USAGE)
        config.active = args.name
    elif args.action == "remove":
        if config.profiles.pop(args.name, None) is None:
            return fail(f"no profile named {args.name!r}", EXIT_USAGE)
        if config.active == args.name:
            config.active = "embedded"
    config.save()
    return EXIT_OK


def cmd_dashboard(args: argparse.Namespace) -> int:
    from spyglass.tui.app import run_dashboard

    return run_dashboard(profile_name=args.profile, data=args.data)


# -- argument parsing ----------------------------------------------------------------------------
def usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spyglass", description="Internet intelligence in the terminal.")
    parser.add_argument("--version", action="version", version=f"spyglass {__version__}")
    parser.add_argument("--profile", help="profile to use (default: the active one)")
    parser.add_argument("--data", type=Path, help="data directory of the embedded backend")
    parser.set_defaults(func=cmd_dashboard)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")

    p = sub.add_parser("serve", help="run the embedded backend in the foreground")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--data", type=Path, default=argparse.SUPPRESS)
    p.add_argument("--namespace", default=DEFAULT_NAMESPACE)
    p.add_argument("--rate-limit", type=float, help="requests per second per key (default: unlimited)")
    p.add_argument("--geonet-only", action="store_true", help="serve only the geonet API, as an agent")
    p.add_argument("--location", help="this agent's location: City,CC,latitude,longitude")
    p.add_argument("--peer", action="append", default=[], metavar="URL",
                   help="another geonet agent for the geo forms (repeatable)")
    p.add_argument("--geonet-deadline", type=float, default=4.0, metavar="SECONDS",
                   help="how long a geo form waits for its slowest location")
    p.add_argument("--nameserver", action="append", metavar="HOST[:PORT]",
                   help="DNS server for lookups (default: the system's)")
    p.add_argument("--fd", type=int, help=argparse.SUPPRESS)
    p.add_argument("--exit-on-stdin-eof", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_serve)

    keys_parser = sub.add_parser("keys", help="API keys of the embedded backend")
    keys_parser.set_defaults(func=lambda a: usage(keys_parser))
    keys = keys_parser.add_subparsers(metavar="ACTION")
    p = keys.add_parser("create", help="create an account and print its new key")
    p.add_argument("--data", type=Path, default=argparse.SUPPRESS)
    p.add_argument("--plan", choices=["free", "member", "enterprise"], default="free")
    p.add_argument("--researcher", action="store_true", help="may scan the whole internet")
    p.set_defaults(func=cmd_keys_create)

    prof_parser = sub.add_parser("profile", help="named connection profiles")
    prof_parser.set_defaults(func=lambda a: usage(prof_parser))
    prof = prof_parser.add_subparsers(metavar="ACTION")
    prof.add_parser("list", help="list profiles").set_defaults(func=cmd_profile, action="list")
    p = prof.add_parser("add", help="add or replace a profile")
    p.add_argument("name")
    p.add_argument("--url", required=True, help="main API base URL")
    p.add_argument("--key")
    p.add_argument("--stream-url")
    p.add_argument("--trends-url")
    p.add_argument("--geonet-url")
    p.add_argument("--namespace", default=DEFAULT_NAMESPACE)
    p.add_argument("--rate", type=float, default=1.0, help="client-side requests per second (0: unpaced)")
    p.set_defaults(func=cmd_profile, action="add")
    for action in ("use", "remove"):
        p = prof.add_parser(action, help=f"{action} a profile")
        p.add_argument("name")
        p.set_defaults(func=cmd_profile, action=action)

    for name, handler, text in (
        ("info", _info, "plan, credits and usage limits"),
        ("account", _account, "the account profile"),
        ("myip", _myip, "your address as the server sees it"),
        ("headers", _headers, "the headers your client sent"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("--json", action="store_true", help="print the API's JSON")
        p.set_defaults(func=api_command(handler))
    for name, handler, text in (
        ("ping", _ping, "ping a target from the geonet agent"),
        ("geoping", _geoping, "ping a target from every geonet location"),
        ("dns", _dns, "look a name up from the geonet agent"),
        ("geodns", _geodns, "look a name up from every geonet location"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("target", help="IP address or hostname")
        if "dns" in name:
            p.add_argument("--rtype", default="A", help="record type (default A)")
        p.add_argument("--json", action="store_true", help="print the API's JSON")
        p.set_defaults(func=api_command(handler))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result = args.func(args)
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        return result
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # every failure a user can meet becomes one line and an exit code
        from spyglass.client.errors import SpyglassError
        from spyglass.server.launcher import BackendFailed

        if isinstance(exc, (SpyglassError, BackendFailed, ValueError)):
            return fail(str(exc), exit_code_for(exc))
        raise
