"""The embedded backend in the foreground: serve."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from spyglass import DEFAULT_NAMESPACE
from spyglass.cli.common import Common, passwords_in_argv, state_address, store_address
from spyglass.cli.exits import EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE, fail

# Options that also come from the environment, so that the backend the dashboard starts (it
# inherits the environment) can be given them too. An option given on the command line wins.
ENV_SMTP, ENV_NOTIFIER_URLS, ENV_SCAN_ALLOW = "SPYGLASS_SMTP", "SPYGLASS_NOTIFIER_URLS", "SPYGLASS_SCAN_ALLOW"
ENV_NOTIFIER_ALLOW, ENV_GEONET_ALLOW = "SPYGLASS_NOTIFIER_ALLOW", "SPYGLASS_GEONET_ALLOW"
ENV_NAMESERVER = "SPYGLASS_NAMESERVER"  # also the dashboard's own DNS measurements (netools/dns.py)


def env_list(name: str) -> list[str]:
    """A list in an environment variable: values separated by spaces or commas."""
    return os.environ.get(name, "").replace(",", " ").split()


def settings_from(args: argparse.Namespace):
    """The backend's settings from ``serve``'s options and the environment (ValueError names a bad one)."""
    from spyglass.config import data_dir
    from spyglass.netools.scantargets import DEFAULT_ALLOWED
    from spyglass.server.geonet import GeonetSettings, parse_location
    from spyglass.server.guard import Limits
    from spyglass.server.settings import Settings

    geonet_allow = args.geonet_allow or env_list(ENV_GEONET_ALLOW)
    geonet = GeonetSettings(
        peers=args.peer,
        deadline=args.geonet_deadline,
        rate_limit=args.geonet_rate,
        allow=[network_option("--geonet-allow", n) for n in geonet_allow],
    )
    if args.location:
        geonet.location = parse_location(args.location)
    if nameservers := args.nameserver or env_list(ENV_NAMESERVER):
        from spyglass.netools.dns import parse_nameserver

        servers = [parse_nameserver(ns) for ns in nameservers]
        geonet.nameservers = [host for host, _ in servers]
        geonet.dns_port = servers[0][1]  # dnspython uses one port for all of them
    smtp = args.smtp or os.environ.get(ENV_SMTP)
    allowed = args.scan_allow or env_list(ENV_SCAN_ALLOW)
    notifier_urls = args.notifier_url or os.environ.get(ENV_NOTIFIER_URLS, "").split()
    notifier_allow = args.notifier_allow or env_list(ENV_NOTIFIER_ALLOW)
    store, state = store_address(args), state_address(args)
    if args.follow_store and not store:
        raise ValueError("--follow-store follows a shared banner store: name it with --store clickhouse://...")
    return Settings(
        data_dir=Path(args.data or data_dir()),
        store=store,
        state=state,
        follow_store=args.follow_store or bool(store and state),  # one service of several backends
        namespace=args.namespace,
        rate_limit=args.rate_limit,
        geonet=geonet,
        smtp_server=parse_smtp(smtp) if smtp else None,
        # Listening beyond this machine, by default no network: loopback there is the server's own
        # services (its databases, its mail relay), which any paying key could otherwise scan.
        scan_allow=[network_option("--scan-allow", n) for n in allowed]
        if allowed
        else list(DEFAULT_ALLOWED if on_loopback(args.host) else ()),
        scan_concurrency=args.scan_concurrency,
        scan_timeout=args.scan_timeout,
        scan_rate=args.scan_rate,
        scan_max_ips=args.scan_max_ips,
        scan_lease=args.scan_lease,
        demo_rate=args.demo_rate,
        notifier_urls=parse_notifier_urls(notifier_urls),
        notifier_allow=[network_option("--notifier-allow", n) for n in notifier_allow],
        limits=Limits(
            args.request_timeout, args.body_timeout, args.max_connections, args.max_in_flight, workers=args.workers
        ),
        forwarded_allow=[network_option("--forwarded-allow", n) for n in args.forwarded_allow or []],
        bulk_data=not args.no_bulk_data,
        collect_apart=True,
    )


def network_option(option: str, text: str) -> str:
    import ipaddress

    try:
        return str(ipaddress.ip_network(text, strict=False))
    except ValueError:
        raise ValueError(f"{option} takes a CIDR netblock, not {text!r}") from None


def parse_notifier_urls(items: list[str]) -> dict[str, str]:
    from spyglass.server.alerts.providers import PROVIDERS

    out = {}
    for item in items:
        provider, _, url = item.partition("=")
        if provider not in PROVIDERS or not url.startswith(("http://", "https://")):
            raise ValueError(
                f"--notifier-url takes PROVIDER=URL (PROVIDER one of {', '.join(PROVIDERS)}), not {item!r}"
            )
        out[provider] = url
    return out


def parse_smtp(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":") if text.count(":") == 1 else (text, "", "25")
    if not host or not port.isdigit():
        raise ValueError(f"--smtp takes HOST[:PORT], not {text!r}")
    return host, int(port)


def on_loopback(host: str) -> bool:
    """Whether ``serve --host`` listens on this machine only."""
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def exposure_warning(host: str, rate_limit: float | None) -> str | None:
    """What ``serve`` says when it listens beyond this machine: who can reach what."""
    if on_loopback(host):
        return None
    limits = f"{rate_limit:g} requests a second per key" if rate_limit else "no rate limit per key (--rate-limit)"
    return (
        f"serve: warning: listening on {host}, beyond this machine. The API takes keys ({limits}); "
        "geonet takes none and pings and looks up names for anyone, 5 requests a second per address "
        "(--geonet-rate); on-demand scans reach no network unless --scan-allow names one; HTTP only "
        "(no TLS): put it behind a TLS proxy for anything but a trusted network."
    )


def serve_command(args: argparse.Namespace) -> int:
    import socket

    from spyglass.local.datalock import DataDirBusy
    from spyglass.server import geoip
    from spyglass.server.banners.store import StoreUnavailable
    from spyglass.server.runner import WorkersFailed, serve
    from spyglass.server.state.sqlite.database import DiskFull

    try:
        geoip.use(args.geoip or list(geoip.configured()))  # (its worker processes read them too)
        settings = settings_from(args)
    except geoip.GeoError as exc:
        return fail(f"serve: {exc}", EXIT_USAGE)
    except ValueError as exc:
        return fail(f"serve: {exc}", EXIT_USAGE)
    if args.workers < 1 or (args.workers > 1 and args.geonet_only):
        return fail(
            "serve: --workers takes a number of 1 or more, for the whole backend (not --geonet-only)", EXIT_USAGE
        )
    from spyglass.present.stream import quiet_stream_hint

    quiet = quiet_stream_hint(args.demo, args.demo_rate)
    for note in (exposure_warning(args.host, args.rate_limit), quiet and f"serve: {quiet}"):
        if note:
            print(note, file=sys.stderr, flush=True)
    sock = socket.socket(fileno=args.fd) if args.fd is not None else None
    warnings = passwords_in_argv(args)  # said once it serves: a failure stays one line

    def announce(line: str) -> None:
        while warnings:  # before the first URL: whoever reads that has the warning already
            print(warnings.pop(0), file=sys.stderr, flush=True)
        print(line, flush=True)

    try:
        serve(
            settings,
            host=args.host,
            port=args.port,
            geonet_only=args.geonet_only,
            sock=sock,
            demo=args.demo,
            exit_on_stdin_eof=args.exit_on_stdin_eof,
            announce=announce,
            workers=args.workers,
        )
    except (DataDirBusy, StoreUnavailable, WorkersFailed, DiskFull) as exc:
        return fail(f"serve: {exc}", EXIT_UNAVAILABLE)
    except ValueError as exc:  # a --store or --state address that is not one, a refused password
        return fail(f"serve: {exc}", EXIT_USAGE)
    except OSError as exc:
        return fail(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}", EXIT_UNAVAILABLE)
    return EXIT_OK


def _geonet_options(parser: argparse.ArgumentParser) -> None:
    """Where this agent is, its peers, and what its ping and DNS lookups may reach."""
    p = parser.add_argument_group("geonet")
    p.add_argument("--location", help="this agent's location: City,CC,latitude,longitude")
    p.add_argument(
        "--peer", action="append", default=[], metavar="URL", help="another geonet agent for the geo forms (repeatable)"
    )
    p.add_argument(
        "--geonet-deadline",
        type=float,
        default=4.0,
        metavar="SECONDS",
        help="how long a geo form waits for its slowest location",
    )
    p.add_argument(
        "--geonet-rate",
        type=float,
        default=5.0,
        metavar="N",
        help="geonet requests a second from one address (it takes no key; a burst of 20)",
    )
    p.add_argument(
        "--geonet-allow",
        action="append",
        metavar="CIDR",
        help="a loopback, private or link-local network geonet may ping and show in DNS answers (repeatable, "
        f"or a list in ${ENV_GEONET_ALLOW}; default: none, so nobody can make the server probe its own networks)",
    )
    p.add_argument(
        "--nameserver",
        action="append",
        metavar="HOST[:PORT]",
        help=f"DNS server for lookups (repeatable, or a list in ${ENV_NAMESERVER}; default: the system's)",
    )


def _scan_options(parser: argparse.ArgumentParser) -> None:
    """What scans may reach, and how hard they work."""
    p = parser.add_argument_group("on-demand scans")
    p.add_argument(
        "--scan-allow",
        action="append",
        metavar="CIDR",
        help="a network on-demand scans may reach (repeatable, or a list in $SPYGLASS_SCAN_ALLOW; default: "
        "loopback only, 127.0.0.0/8 and ::1)",
    )
    p.add_argument("--scan-concurrency", type=int, default=256, metavar="N", help="open scan connections at once")
    p.add_argument(
        "--scan-rate",
        type=int,
        default=20_000,
        metavar="N",
        help="scan connects a second, all scans together, at most (fewer while requests wait)",
    )
    p.add_argument("--scan-timeout", type=float, default=5.0, metavar="SECONDS", help="per scan connection")
    p.add_argument("--scan-max-ips", type=int, default=65_536, metavar="N", help="addresses one scan may cover")
    p.add_argument(
        "--scan-lease",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="with a shared --state: how long a backend that stops answering keeps the scan it ran before "
        "another backend resumes it",
    )


def _alert_options(parser: argparse.ArgumentParser) -> None:
    """Where notifications and e-mail go, and which internal networks they may reach."""
    p = parser.add_argument_group("alerts and e-mail")
    p.add_argument(
        "--smtp",
        metavar="HOST[:PORT]",
        help=f"SMTP server for e-mail the backend sends (notifiers, invitations; or ${ENV_SMTP})",
    )
    p.add_argument(
        "--notifier-url",
        action="append",
        metavar="PROVIDER=URL",
        help="base URL of a notifier provider's service (slack, pagerduty, telegram, gitter; phone: an SMS "
        "gateway; repeatable, or a space-separated list in $SPYGLASS_NOTIFIER_URLS)",
    )
    p.add_argument(
        "--notifier-allow",
        action="append",
        metavar="CIDR",
        help="a loopback, private or link-local network that webhook notifiers may reach (repeatable, or a list "
        f"in ${ENV_NOTIFIER_ALLOW}; default: none, so no account can make the server probe its own networks)",
    )


def _limit_options(parser: argparse.ArgumentParser) -> None:
    """Timeouts, connection and request limits, proxies, and worker processes."""
    p = parser.add_argument_group("connections and processes")
    p.add_argument(
        "--request-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="a connection's whole request head must arrive within this (idle and slow senders are closed)",
    )
    p.add_argument("--body-timeout", type=float, default=30.0, metavar="SECONDS", help="and its body within this")
    p.add_argument(
        "--max-connections",
        type=int,
        metavar="N",
        help="open connections at most; past it the longest idle one is closed, or the newcomer gets 503 "
        "(default: the descriptor limit less 256, at most 4,096)",
    )
    p.add_argument(
        "--max-in-flight",
        type=int,
        default=64,
        metavar="N",
        help="requests answered at once (stream readers aside); past it 503 with Retry-After at once",
    )
    p.add_argument(
        "--forwarded-allow",
        action="append",
        metavar="CIDR",
        help="a reverse proxy whose X-Forwarded-For names the client (repeatable; default: none, so the "
        "address that connects is the client's)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="serve with N processes to use N cores: one writes (collection, scans, alerts), the others answer "
        "what only reads and hand it the rest; credits stay exact (rate limits hold per worker)",
    )


def register(sub, common: Common) -> None:
    p = sub.add_parser(
        "serve",
        parents=[common.data, common.store, common.state],
        help="run the embedded backend in the foreground",
        description="Run the embedded backend in the foreground and print the base URLs that "
        "answer (main, geonet and trends; stream once it is served).",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--namespace", default=DEFAULT_NAMESPACE)
    p.add_argument("--rate-limit", type=float, help="requests per second per key (default: unlimited)")
    p.add_argument("--geonet-only", action="store_true", help="serve only the geonet API, as an agent")
    p.add_argument(
        "--demo",
        action="store_true",
        help="on the first start of an empty data dir, load 20,000 synthetic demo banners "
        "(198.18.0.0/15), as the dashboard's embedded backend does",
    )
    p.add_argument(
        "--demo-rate",
        type=float,
        default=0.0,
        metavar="N",
        help="collect N synthetic banners per second (indexed and published on the stream), on an "
        "empty data dir or the demo data only",
    )
    p.add_argument(
        "--follow-store",
        action="store_true",
        help="stream what any backend collects into the --store, read from it by mark (the default "
        "when --state names a shared state too), not only what this one collects",
    )
    p.add_argument(
        "--no-bulk-data",
        action="store_true",
        help="do not build the bulk data files (another backend on the same banner store does); "
        "those already built stay listed",
    )
    p.add_argument(
        "--geoip",
        nargs="+",
        metavar="PATH",
        help="MaxMind-format databases (City or Country, ASN) giving the backend's scans of public "
        "addresses their location, ASN and organization (default: $SPYGLASS_GEOIP, paths "
        f"separated by {os.pathsep!r})",
    )
    for options in (_geonet_options, _scan_options, _alert_options, _limit_options):
        options(p)
    p.add_argument("--fd", type=int, help=argparse.SUPPRESS)
    p.add_argument("--exit-on-stdin-eof", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=serve_command)
