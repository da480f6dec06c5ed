"""Network alerts and notifiers: ``spyglass alert ...`` and ``spyglass notifier ...``."""

from __future__ import annotations

import argparse
import sys

from spyglass.cli.common import Common, api_command, with_clients
from spyglass.cli.exits import UsageError
from spyglass.cli.render import print_lines
from spyglass.present import alerts as present
from spyglass.safetext import clean

ALERT_HEADERS = ("ID", "NAME", "SIZE", "EXPIRES", "TRIGGERS", "NETWORKS")


def warn(answer: object) -> None:
    """The server's warning of an answer on stderr (a notifier attached that cannot deliver yet)."""
    if warning := getattr(answer, "warning", None):
        print(f"spyglass: warning: {clean(warning, one_line=True)}", file=sys.stderr)


async def alert_list(clients, args):
    alerts = await clients.alerts.list()
    if args.json:
        return [a.to_api() for a in alerts]
    if not alerts:
        print("no alerts: create one with spyglass alert create NAME NETWORK...")
        return None
    print_lines(present.table([present.alert_row(a) for a in alerts], ALERT_HEADERS))


def network(text: str) -> str:
    """An argparse type: an IP or a CIDR range, checked before any request (the server's answer
    names its API field, filters.ip, which nobody typed here)."""
    from spyglass.netblocks import parse_netblock

    try:
        parse_netblock(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an IP or CIDR range (e.g. 192.0.2.0/24)") from None
    return text


async def alert_create(clients, args):
    if args.triggers:  # before the alert is made: its size or the plan is not the first thing said
        known = {t.name for t in await clients.alerts.triggers()}
        if unknown := [n for n in (n.strip() for n in args.triggers.split(",")) if n and n not in known]:
            raise UsageError(f"Unknown trigger {', '.join(unknown)}: the triggers are {', '.join(sorted(known))}")
    alert = await clients.alerts.create(args.name, args.networks, expires=args.expires)
    try:
        if args.triggers:
            await clients.alerts.enable_triggers(alert.id, args.triggers)
        for notifier in args.notifier or []:
            warn(await clients.alerts.add_notifier(alert.id, notifier))
    except Exception:  # an unknown trigger or notifier: no half-made alert is left behind
        await clients.alerts.delete(alert.id)
        raise
    if args.triggers or args.notifier:
        alert = await clients.alerts.get(alert.id)
    return alert if args.json else print_lines(present.alert_lines(alert))


async def alert_info(clients, args):
    alert = await clients.alerts.get(args.id)
    return alert if args.json else print_lines(present.alert_lines(alert))


async def alert_edit(clients, args):
    await clients.alerts.update(args.id, args.networks, expires=args.expires)
    alert = await clients.alerts.get(args.id)  # with its notifiers and status, as info shows it
    return alert if args.json else print_lines(present.alert_lines(alert))


async def alert_delete(clients, args):
    await clients.alerts.delete(args.id)
    return {"success": True} if args.json else print(f"deleted alert {args.id}")


async def alert_triggers(clients, args):
    triggers = await clients.alerts.triggers()
    if args.json:
        return [t.to_api() for t in triggers]
    rows = [(t.name, t.rule or "-", t.description) for t in triggers]
    print_lines(present.table(rows, ("NAME", "RULE", "DESCRIPTION")))


ALERT_ID = "the alert's id, or its name where no other alert of yours has that name"


async def alert_id(clients, given: str) -> str:
    """The id of the alert ``given`` names: its id, else its name when one alert has it. Two alerts
    of that name are bad input (their ids said); none is not found."""
    from spyglass.client.errors import NotFound
    from spyglass.present.alerts import alerts_meant

    named, wrong = alerts_meant(await clients.alerts.list(), given)
    if len(named) > 1:
        raise UsageError(str(wrong))
    if not named:
        raise NotFound(f"{wrong} (spyglass alert list)", 404)
    return named[0]


def _of_alert(handler):
    """``handler`` with ``args.id`` the id of the alert the user named (by id or name)."""

    async def run(clients, args):
        args.id = await alert_id(clients, args.id)
        return await handler(clients, args)

    return run


def _switch(method: str, done: str):
    async def run(clients, args):
        # `any new_service` as docs/commands.md writes NAMES, or `any,new_service` (newcomer trial 19)
        triggers = ",".join(name for given in args.triggers for name in given.split(",") if name.strip())
        await getattr(clients.alerts, method)(args.id, triggers)
        return {"success": True} if args.json else print(f"{done} {triggers} on alert {args.id}")

    return run


def _ignore(method: str, done: str):
    async def run(clients, args):
        await getattr(clients.alerts, method)(args.id, args.trigger, args.service)
        if method == "ignore_service" and args.trigger not in (await clients.alerts.get(args.id)).triggers:
            # kept for when it is on, but in no list while it is off: said rather than hidden
            print(f"spyglass: {args.trigger} is off on this alert: this applies once it is turned on", file=sys.stderr)
        return {"success": True} if args.json else print(f"{done} {args.service} for {args.trigger} on {args.id}")

    return run


def _attach(method: str, done: str):
    async def run(clients, args):
        warn(await getattr(clients.alerts, method)(args.id, args.notifier))
        return {"success": True} if args.json else print(f"{done} notifier {args.notifier} on alert {args.id}")

    return run


async def alert_log(clients, args):
    log = await clients.alerts.notifications(args.id, args.limit)
    if args.json:
        return [n.to_api() for n in log]
    if not log:
        print("no notifications yet")
        return None
    rows = [present.notification_row(n) for n in log]
    print_lines(present.table(rows, ("WHEN", "SERVICE", "NOTIFIER", "OUTCOME", "DETAIL")))


def provider_args(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"provider arguments are NAME=VALUE (e.g. to=ops@example.com), not {item!r}")
        out[name] = value
    return out


async def notifier_list(clients, args):
    result = await clients.notifiers.list()
    if args.json:
        return result
    rows = [present.notifier_row(n) for n in result.matches]
    print_lines(present.table(rows, ("ID", "PROVIDER", "DESCRIPTION", "ARGUMENTS")))


async def notifier_providers(clients, args):
    providers = await clients.notifiers.providers()
    if args.json:
        return {name: p.to_api() for name, p in providers.items()}
    print_lines(present.table([(n, ", ".join(p.required)) for n, p in providers.items()], ("PROVIDER", "REQUIRED")))


async def notifier_create(clients, args):
    created = await clients.notifiers.create(args.provider, provider_args(args.args), description=args.description)
    return created if args.json else print(created.id)


async def notifier_info(clients, args):
    n = await clients.notifiers.get(args.id)
    if args.json:
        return n
    ident, provider, description, shown = present.notifier_row(n)
    print_lines([f"id           {ident}", f"provider     {provider}", f"description  {description or '-'}"])
    print(f"arguments    {shown}")


async def notifier_edit(clients, args):
    values = provider_args(args.args)
    if args.description is not None:
        values["description"] = args.description
    if not values:
        raise UsageError("give NAME=VALUE arguments or --description to change")
    result = await clients.notifiers.update(args.id, values)
    return result if args.json else print(f"updated notifier {args.id}")


async def notifier_delete(clients, args):
    alerts = await clients.alerts.list()  # the alerts it notifies for are named: they lose it
    await clients.notifiers.delete(args.id)
    losing = present.losing_notifier(alerts, args.id, done=True)
    return {"success": True} if args.json else print(f"deleted notifier {args.id}" + (f": {losing}" if losing else ""))


async def notifier_test(args: argparse.Namespace) -> int:
    """Exit 0 when the test notification was delivered, 1 when it was not (the reason printed)."""
    from spyglass.cli.exits import EXIT_FAILURE, EXIT_OK
    from spyglass.cli.render import print_json

    async def work(clients) -> int:
        result = await clients.notifiers.test(args.id)
        if args.json:
            print_json(result)
        else:
            print(f"{'sent' if result.success else 'failed'}: {clean(result.detail, one_line=True)}")
        return EXIT_OK if result.success else EXIT_FAILURE

    return await with_clients(args, work)


def _family(sub, common: Common, name: str, text: str):
    parser = sub.add_parser(name, help=text, description=text)
    parser.set_defaults(func=common.usage(parser))
    return parser.add_subparsers(metavar="ACTION", parser_class=type(parser))


def _action(actions, common: Common, name: str, handler, text: str) -> argparse.ArgumentParser:
    p = actions.add_parser(name, help=text, description=text, parents=common.api)
    p.set_defaults(func=api_command(handler))
    return p


def _alert_action(actions, common: Common, name: str, handler, text: str) -> argparse.ArgumentParser:
    """An alert command on one alert: its first argument names it, by id or by name."""
    p = _action(actions, common, name, _of_alert(handler), text)
    p.add_argument("id", metavar="ID", help=ALERT_ID)
    return p


def register(sub, common: Common) -> None:
    actions = _family(sub, common, "alert", "network alerts: monitored IPs and networks, triggers, notifiers")
    _action(actions, common, "list", alert_list, "the alerts with size, expiry and enabled triggers")
    p = _action(actions, common, "create", alert_create, "monitor IPs or CIDR ranges")
    p.add_argument("name")
    p.add_argument(
        "networks", nargs="+", type=network, metavar="NETWORK", help="an IP or a CIDR range, e.g. 192.0.2.0/24"
    )
    p.add_argument("--expires", type=int, metavar="SECONDS", help="stop notifying after this many seconds")
    p.add_argument("--triggers", metavar="NAMES", help="triggers to enable, comma-separated (see alert triggers)")
    p.add_argument("--notifier", action="append", metavar="ID", help="a notifier to attach (repeatable)")
    _alert_action(actions, common, "info", alert_info, "one alert: networks, triggers, ignored services, notifiers")
    p = _alert_action(actions, common, "edit", alert_edit, "replace the alert's networks (and its expiry)")
    p.add_argument("networks", nargs="+", type=network, metavar="NETWORK")
    p.add_argument(
        "--expires",
        type=int,
        metavar="SECONDS",
        help="stop notifying this many seconds after the alert was created (0: never)",
    )
    _alert_action(actions, common, "delete", alert_delete, "delete an alert")
    _action(actions, common, "triggers", alert_triggers, "the triggers an alert may enable, with their rules")
    for name, method, done, text in (
        ("enable", "enable_triggers", "enabled", "enable triggers (names, apart or comma-separated)"),
        ("disable", "disable_triggers", "disabled", "disable triggers (names, apart or comma-separated)"),
    ):
        p = _alert_action(actions, common, name, _switch(method, done), text)
        p.add_argument("triggers", metavar="TRIGGER", nargs="+")
    for name, method, done, text in (
        ("ignore", "ignore_service", "ignoring", "never notify a service (ip:port) for a trigger"),
        ("unignore", "unignore_service", "notifying", "notify a service (ip:port) for a trigger again"),
    ):
        p = _alert_action(actions, common, name, _ignore(method, done), text)
        p.add_argument("trigger")
        p.add_argument("service", metavar="IP:PORT")
    for name, method, done, text in (
        ("attach", "add_notifier", "attached", "send the alert's notifications to a notifier"),
        ("detach", "remove_notifier", "detached", "stop sending the alert's notifications to a notifier"),
    ):
        p = _alert_action(actions, common, name, _attach(method, done), text)
        p.add_argument("notifier")
    p = _alert_action(actions, common, "log", alert_log, "recent notifications: when, which notifier, outcome")
    p.add_argument("--limit", type=int, metavar="N", help="the newest N delivery attempts (default 50, at most 1,000)")

    actions = _family(sub, common, "notifier", "notifiers: where alerts are sent (e-mail, webhook, slack...)")
    _action(actions, common, "list", notifier_list, "the notifiers (secrets masked)")
    _action(actions, common, "providers", notifier_providers, "each provider's required arguments")
    p = _action(actions, common, "create", notifier_create, "create a notifier; prints its id")
    p.add_argument("provider")
    p.add_argument("args", nargs="*", metavar="NAME=VALUE", help="the provider's arguments, e.g. url=https://...")
    p.add_argument("--description")
    p = _action(actions, common, "info", notifier_info, "one notifier (secrets masked)")
    p.add_argument("id")
    p = _action(actions, common, "edit", notifier_edit, "change a notifier's arguments or description")
    p.add_argument("id")
    p.add_argument("args", nargs="*", metavar="NAME=VALUE")
    p.add_argument("--description")
    p = _action(actions, common, "delete", notifier_delete, "delete a notifier")
    p.add_argument("id")
    p = _action(actions, common, "test", notifier_list, "send a test notification now and show the outcome")
    p.add_argument("id")
    p.set_defaults(func=notifier_test)
