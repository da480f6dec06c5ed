"""DNS of the main API: domain (from the index, 1 query credit), resolve and reverse. (``spyglass
dns`` is the geonet lookup, in geonet.py.)"""

from __future__ import annotations

import sys

from spyglass.cli import render
from spyglass.cli.common import Common, api_command, positive

RECORD_TYPES = ("A", "AAAA", "CNAME", "NS", "SOA", "MX", "TXT")


async def domain(clients, args):
    from spyglass.present import dns

    info = await clients.dns.domain(args.name, history=args.history, type=args.type, page=args.page)
    if args.json:
        return info
    render.print_lines(dns.domain_lines(info))
    print(dns.domain_summary(info), file=sys.stderr)


async def resolve(clients, args):
    from spyglass.present import dns

    found = await clients.dns.resolve(args.names)
    return found if args.json else render.print_lines(dns.answer_lines(found))


async def reverse(clients, args):
    from spyglass.present import dns

    found = await clients.dns.reverse(args.ips)
    return found if args.json else render.print_lines(dns.answer_lines(found))


ASKS = "SPYGLASS_NAMESERVER=HOST[:PORT] if set, as serve --nameserver does, else the system's DNS server"


def register(sub, common: Common) -> None:
    p = sub.add_parser(
        "domain",
        parents=common.api,
        help="subdomains and records of a domain, from the index (1 query credit)",
        description="The hostnames under a domain that banners carry, as DNS records (1 query credit).",
    )
    p.add_argument("name", help="domain name, e.g. example.com")
    p.add_argument("--history", action="store_true", help="include records no longer current")
    p.add_argument("--type", type=str.upper, choices=RECORD_TYPES, help="only records of this type")
    p.add_argument("--page", type=positive, default=1, help="page of 100 records (default 1)")
    p.set_defaults(func=api_command(domain))
    p = sub.add_parser(
        "resolve",
        parents=common.api,
        help="the IP address of hostnames (free)",
        description="The IP addresses of hostnames, as the backend's DNS server answers (free). The "
        f"embedded backend asks {ASKS}.",
    )
    p.add_argument("names", nargs="+", metavar="NAME", help="hostname")
    p.set_defaults(func=api_command(resolve))
    p = sub.add_parser(
        "reverse",
        parents=common.api,
        help="the hostnames of IP addresses (free)",
        description=f"The hostnames of IP addresses by their PTR records (free). The embedded backend asks {ASKS}.",
    )
    p.add_argument("ips", nargs="+", metavar="IP", help="IP address")
    p.set_defaults(func=api_command(reverse))
