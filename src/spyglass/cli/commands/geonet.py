"""The geographic network tools: ping, geoping, dns, geodns."""

from __future__ import annotations

from spyglass.cli import render
from spyglass.cli.commands.dns import ASKS
from spyglass.cli.common import Common, api_command


async def refuse_demo_addresses(clients, target: str) -> None:
    """While the backend holds demo data, its synthetic addresses (198.18.0.0/15) are not measured:
    no host of the demo is really there."""
    from spyglass.cli.exits import UsageError
    from spyglass.datagen import is_demo_address

    if is_demo_address(target) and ((await clients.tools.backend_info()) or {}).get("demo"):
        raise UsageError(f"{target} is a synthetic demo address (198.18.0.0/15): it is not measured")


async def ping(clients, args):
    await refuse_demo_addresses(clients, args.target)
    result = await clients.geonet.ping(args.target)
    return result if args.json else render.ping_rows([result])


async def geoping(clients, args):
    await refuse_demo_addresses(clients, args.target)
    results = await clients.geonet.geoping(args.target)
    render.missing_rows(results)
    return [r.to_api() for r in results] if args.json else render.ping_rows(results)


async def dns(clients, args):
    result = await clients.geonet.dns(args.target, args.rtype)
    return result if args.json else render.dns_rows([result])


async def geodns(clients, args):
    results = await clients.geonet.geodns(args.target, args.rtype)
    render.missing_rows(results)
    return [r.to_api() for r in results] if args.json else render.dns_rows(results)


def register(sub, common: Common) -> None:
    for name, handler, text in (
        ("ping", ping, "ping a target from the geonet agent"),
        ("geoping", geoping, "ping a target from every geonet location"),
        ("dns", dns, "look a name up from the geonet agent"),
        ("geodns", geodns, "look a name up from every geonet location"),
    ):
        said = f"{text} (the embedded backend's agent asks {ASKS})" if "dns" in name else text
        p = sub.add_parser(name, help=text, description=said, parents=common.api)
        p.add_argument("target", help="IP address or hostname")
        if "dns" in name:
            p.add_argument("--rtype", default="A", help="record type (default A)")
        p.set_defaults(func=api_command(handler, host="geonet"))
