"""The ``spyglass`` command: the dashboard with no arguments, otherwise scriptable commands.

Exit codes: 0 success, 1 unexpected failure, 2 bad input or usage, 3 key, plan or credits,
4 not found, 5 connection, timeout, rate limit or server failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
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


# JSON escapes C0 controls itself; DEL, C1 controls (0x9b is an 8-bit CSI) and bidi overrides
# are escaped here too, so untrusted text stays inert in a terminal and the JSON stays exact.
_UNSAFE_IN_JSON = re.compile("[\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def print_json(value: Any) -> None:
    if hasattr(value, "to_api"):
        value = value.to_api()
    text = json.dumps(value, indent=2, ensure_ascii=False)
    print(_UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


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


def _service_line(b) -> str:
    from spyglass.safetext import clean

    what = b.product_line or (b.module or "")
    return clean(f"{b.port}/{b.transport:<4} {what:<32} {b.headline}", one_line=True, max_chars=150)


async def _host(clients, args):
    host = await clients.intel.host(args.ip, history=args.history)
    if args.json:
        return host
    where = ", ".join(x for x in (host.city, host.country_name) if x)
    print_pairs([("ip", host.ip_str), ("org", host.org or "-"), ("isp", host.isp or "-"), ("asn", host.asn or "-"),
                 ("location", where or "-"), ("hostnames", ", ".join(host.hostnames) or "-"),
                 ("tags", ", ".join(host.tags) or "-"), ("vulns", ", ".join(host.vulns) or "-"),
                 ("last update", host.last_update or "-"), ("ports", ", ".join(map(str, host.ports)))])
    for banner in host.data:
        print(f"  {banner.timestamp[:19]}  {_service_line(banner)}")


def _facet_rows(facets) -> None:
    from spyglass.safetext import clean

    for name, values in (facets or {}).items():
        print(f"\n{name}")
        top = max((v.count for v in values), default=1) or 1
        for v in values:
            bar = "#" * max(1, round(24 * v.count / top))
            print(f"  {clean(v.label, one_line=True, max_chars=40):<40} {v.count:>10,}  {bar}")


async def _search(clients, args):
    result = await clients.intel.search(args.query, args.facets, page=args.page)
    if args.json:
        return result
    from spyglass.safetext import clean

    for b in result.matches:
        print(f"{clean(b.ip_str, one_line=True):<16} {_service_line(b)}")
    print(f"{result.total:,} results (page {args.page}, {len(result.matches)} shown)", file=sys.stderr)
    _facet_rows(result.facets)


async def _count(clients, args):
    result = await clients.intel.count(args.query, args.facets)
    if args.json:
        return result
    print(f"{result.total:,}")
    _facet_rows(result.facets)


async def _export(clients, args):
    from spyglass.export import export

    fields = [f.strip() for f in args.fields.split(",")] if args.fields else None
    await export(clients.intel, args.query, args.output, fields, args.limit)


def cmd_import(args: argparse.Namespace) -> int:
    from spyglass.config import data_dir
    from spyglass.progress import Progress
    from spyglass.server.index import BannerIndex, IndexBusy
    from spyglass.server.index.importer import import_files

    missing = [str(p) for p in args.files if not p.is_file()]
    if missing:
        return fail(f"no such file: {', '.join(missing)}", EXIT_USAGE)
    index = BannerIndex(args.data or data_dir())
    progress = Progress("import")
    try:
        report = import_files(index, args.files, progress=lambda done, total, r: progress.update(
            done / total if total else None, f"{r.read:,} read, {r.added:,} new, {r.bad:,} bad"))
    except IndexBusy as exc:
        return fail(str(exc), EXIT_UNAVAILABLE)
    finally:
        index.close()
    progress.done(f"{report.read:,} read, {report.added:,} new, {report.duplicates:,} already there, {report.bad:,} bad")
    for problem in report.problems:
        print(f"  {problem}", file=sys.stderr)
    if report.bad > len(report.problems):
        print(f"  … and {report.bad - len(report.problems):,} more bad lines", file=sys.stderr)
    return EXIT_OK


def cmd_generate(args: argparse.Namespace) -> int:
    import gzip

    import orjson

    from spyglass.datagen import generate
    from spyglass.progress import Progress

    if args.count < 1:
        return fail("--count must be at least 1", EXIT_USAGE)
    progress = Progress("generate")
    opener = gzip.open if args.output.suffix == ".gz" else open
    with opener(args.output, "wb", **({"compresslevel": 3} if args.output.suffix == ".gz" else {})) as fh:
        for n, banner in enumerate(generate(args.count, args.seed), start=1):
            fh.write(orjson.dumps(banner) + b"\n")
            if n % 10_000 == 0:
                progress.update(n / args.count, f"{n:,} banners")
    progress.done(f"{args.count:,} banners to {args.output}")
    return EXIT_OK


# -- local commands ------------------------------------------------------------------------------
def cmd_serve(args: argparse.Namespace) -> int:
    import socket

    from spyglass.config import data_dir
    from spyglass.server.routers.geonet import GeonetSettings, parse_location
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
              demo=args.demo, exit_on_stdin_eof=args.exit_on_stdin_eof,
              announce=lambda line: print(line, flush=True))
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
    p.add_argument("--demo", action="store_true", help="fill an empty backend with synthetic demo banners")
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
    p = sub.add_parser("host", help="everything known about one address")
    p.add_argument("ip")
    p.add_argument("--history", action="store_true", help="every banner ever seen, not only the latest")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(func=api_command(_host))
    for name, handler, text in (("search", _search, "search banners (a filter or page > 1 costs a query credit)"),
                                ("count", _count, "count matches and summarize facets (free)")):
        p = sub.add_parser(name, help=text)
        p.add_argument("query")
        p.add_argument("--facets", help="e.g. port,org:20,country")
        if name == "search":
            p.add_argument("--page", type=int, default=1)
        p.add_argument("--json", action="store_true", help="print the API's JSON")
        p.set_defaults(func=api_command(handler))
    p = sub.add_parser("export", help="write every result of a query to .json.gz or .csv (resumable)")
    p.add_argument("query")
    p.add_argument("-o", "--output", type=Path, required=True, help="FILE.json.gz or FILE.csv")
    p.add_argument("--fields", help="CSV columns, e.g. ip_str,port,org,location.country_code")
    p.add_argument("--limit", type=int, help="stop after this many banners")
    p.set_defaults(func=api_command(_export))
    p = sub.add_parser("import", help="load banner files (one JSON banner per line, plain or .gz)")
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--data", type=Path, default=argparse.SUPPRESS)
    p.set_defaults(func=cmd_import)
    p = sub.add_parser("generate", help="write a deterministic synthetic banner dataset")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("-o", "--output", type=Path, required=True, help="FILE.json.gz (or .json)")
    p.set_defaults(func=cmd_generate)
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
    except BrokenPipeError:  # the reader went away (| head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # every failure a user can meet becomes one line and an exit code
        from spyglass.client.errors import SpyglassError
        from spyglass.server.launcher import BackendFailed

        if isinstance(exc, (SpyglassError, BackendFailed, ValueError)):
            return fail(str(exc), exit_code_for(exc))
        raise
