"""On-demand scans: ``spyglass scan submit|status|list|internet|ports|protocols``."""

from __future__ import annotations

import asyncio
import sys

from spyglass.cli import render
from spyglass.cli.common import Common, api_command
from spyglass.cli.exits import UsageError
from spyglass.present.values import plural
from spyglass.safetext import clean
from spyglass.secrets import mask_key

POLL_EVERY = 1.0  # seconds between status checks while --wait follows a scan


def scan_request(targets: list[str], ports: str | None, services: list[str]) -> str | dict:
    """What ``submit`` sends as ``ips`` (see :func:`spyglass.netools.scantargets.scan_request`)."""
    from spyglass.netools.scantargets import scan_request as request

    try:
        return request(targets, ",".join([ports or "", *services]))
    except ValueError as exc:
        raise UsageError(f"scan submit: {exc}") from None


async def submit(clients, args):
    result = await clients.scans.submit(scan_request(args.targets, args.ports, args.service))
    if not args.wait:
        if args.json:
            return result
        print(f"{result.id}  {plural(result.count or 0, 'IP')}, {plural(result.credits_left, 'scan credit')} left")
        return None
    args.on_interrupt = f"scan {result.id} goes on on the server (spyglass scan status {result.id})"
    final = await follow(clients, result.id)
    found = await found_banners(clients, result.id)
    if args.json:
        return {"scan": final.to_api(), "matches": found}
    render.search_rows(found)
    print(f"scan {result.id}: {plural(len(found), 'service')} found", file=sys.stderr)
    return None


async def follow(clients, scan_id: str):
    """Poll until DONE, with a progress line on stderr (rewritten in place on a terminal)."""
    from spyglass.present.scans import found, in_flight, progress

    on_tty = sys.stderr.isatty()
    while True:
        status = await clients.scans.status(scan_id)
        line = f"scan {scan_id}: {status.status} {progress(status)}, {found(status)}"
        print(f"\r\x1b[K{line}" if on_tty else line, end="" if on_tty else "\n", file=sys.stderr, flush=True)
        if not in_flight(status):
            if on_tty:
                print(file=sys.stderr)
            return status
        await asyncio.sleep(POLL_EVERY)


async def found_banners(clients, scan_id: str) -> list[dict]:
    """Every banner the scan found (``scan:ID``; a query credit a page, as any filtered search)."""
    out: list[dict] = []
    page = 1
    while True:
        result = await clients.search.search(f"scan:{scan_id}", page=page)
        out += [b.to_api() for b in result.matches]
        if not result.matches or len(out) >= result.total:
            return out
        page += 1


def key_masked(body: dict) -> dict:
    """An answer with its ``api_key`` (the seed's listing and status carry the account's key)
    masked: printed output ends up in logs and terminals' scrollback."""
    if isinstance(body.get("api_key"), str):
        body["api_key"] = mask_key(body["api_key"])
    return body


async def status(clients, args):
    result = await clients.scans.status(args.id)
    if args.json:
        return key_masked(result.to_api())
    from spyglass.present.scans import status_line

    print(status_line(result))


async def cancel(clients, args):
    result = await clients.scans.cancel(args.id)
    if args.json:
        return result
    from spyglass.present.scans import status_line

    print(status_line(result))


async def listing(clients, args):
    result = await clients.scans.list(args.page)
    if args.json:
        body = result.to_api()
        body["matches"] = [key_masked(item) for item in body.get("matches", [])]
        return body
    from spyglass.present.scans import status_line

    render.print_lines([status_line(s) for s in result.matches])
    print(f"{plural(result.total, 'scan')} (page {args.page or 1}, {len(result.matches)} shown)", file=sys.stderr)


async def internet(clients, args):
    result = await clients.scans.internet(args.port, args.protocol)
    if args.json:
        return result
    print(result.id)


async def ports(clients, args):
    result = await clients.scans.ports()
    if args.json:
        return result
    print(" ".join(str(p) for p in sorted(result)))


async def protocols(clients, args):
    result = await clients.scans.protocols()
    if args.json:
        return result
    width = max(map(len, result), default=0)
    render.print_lines([f"{clean(k, one_line=True):<{width}}  {clean(v, one_line=True)}" for k, v in result.items()])


def register(sub, common: Common) -> None:
    top = sub.add_parser("scan", help="on-demand scans", description="Ask for scans and follow them.")
    top.set_defaults(func=common.usage(top))
    actions = top.add_subparsers(metavar="ACTION", parser_class=type(top))
    p = actions.add_parser(
        "submit",
        parents=common.api,
        help="scan IPs or netblocks (1 scan credit per IP)",
        description="Scan addresses and CIDR netblocks on the crawler's ports, or on --ports and "
        "--service. Costs one scan credit per IP; refused (and free) for a free plan, a malformed "
        "target, or a network the backend may not scan.",
    )
    p.add_argument("targets", nargs="+", metavar="TARGET", help="an IP address or CIDR netblock")
    p.add_argument("--ports", help="scan these ports (any protocol), e.g. 80,443 or 1-200")
    p.add_argument(
        "--service", action="append", default=[], metavar="PORT/PROTO", help="a port and its protocol, e.g. 443/https"
    )
    p.add_argument(
        "--wait",
        action="store_true",
        help="follow the scan to DONE (progress on stderr), then print what it found "
        "(a query credit per 100 results, as a search)",
    )
    p.set_defaults(func=api_command(submit))
    p = actions.add_parser(
        "list", help="your scans, newest first, 100 a page", description="Your scans, newest first, 100 a page.",
        parents=common.api,
    )  # fmt: skip
    p.add_argument("--page", type=int, help="which page (from 1; the first without it)")
    p.set_defaults(func=api_command(listing))
    for name, handler, text in (
        ("ports", ports, "the ports the crawler looks for"),
        ("protocols", protocols, "the protocols the crawler speaks"),
    ):
        actions.add_parser(name, help=text, description=text, parents=common.api).set_defaults(
            func=api_command(handler)
        )
    p = actions.add_parser("status", help="one scan's status", description="One scan's status.", parents=common.api)
    p.add_argument("id")
    p.set_defaults(func=api_command(status))
    p = actions.add_parser(
        "cancel",
        help="stop a scan for good (it keeps what it found)",
        description="Stop a scan: its probes end, what it found stays searchable, and a restart of the "
        "backend does not resume it. Spyglass's backend only.",
        parents=common.api,
    )
    p.add_argument("id")
    p.set_defaults(func=api_command(cancel))
    p = actions.add_parser(
        "internet",
        help="scan every allowed network on one port (researchers, enterprise)",
        description="Scan every network the backend may scan on one port and protocol.",
        parents=common.api,
    )
    p.add_argument("port", type=int)
    p.add_argument("protocol")
    p.set_defaults(func=api_command(internet))
