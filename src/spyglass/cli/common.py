"""What the command families share: the options declared once, and running a command against an API."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spyglass.cli.exits import EXIT_OK, EXIT_USAGE, UsageError

if TYPE_CHECKING:  # the client loads when a command runs, not when the parser is built
    from spyglass.client import Clients

# Shared options are SUPPRESSed so a subcommand's copy never overwrites the top-level one
# (`spyglass --data D account`); fill_defaults supplies the defaults after parsing.
DEFAULTS: dict[str, object] = {"data": None, "profile": None, "json": False, "pane": None, "store": None}


def fill_defaults(args: argparse.Namespace) -> argparse.Namespace:
    for name, value in DEFAULTS.items():
        if not hasattr(args, name):
            setattr(args, name, value)
    return args


PANE_NAME = re.compile(r"[a-z][a-z0-9_-]*\Z")


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a count, a page, a limit)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def ip_address(text: str) -> str:
    """An argparse type: one IPv4 or IPv6 address, as written (``host ''`` asked the server for
    /host/ and said it had no such method)."""
    import ipaddress

    try:
        ipaddress.ip_address(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an IP address") from None
    return text.strip()


class PaneAction(argparse.Action):
    """``--pane NAME [ARG]``: a lowercase pane name (the dashboard says if it has no such pane)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        if len(values) > 2:
            parser.error(f"--pane takes a pane name and at most one argument, not {len(values)} words")
        if not PANE_NAME.match(values[0]):
            parser.error(f"--pane: {values[0]!r} is not a pane name (search, host, geo, account, ...)")
        setattr(namespace, self.dest, (values[0], values[1] if len(values) > 1 else None))


class Common:
    """Parent parsers, one per shared option, each declared here and nowhere else."""

    def __init__(self) -> None:
        self.data = self._parent(
            "--data",
            type=Path,
            metavar="DIR",
            help="data directory of the embedded backend (default: $SPYGLASS_DATA_DIR or the user data dir)",
        )
        self.store = self._parent(
            "--store",
            metavar="ADDRESS",
            help="the banner store: clickhouse://HOST:PORT/DATABASE[?cluster=NAME&http_port=N] "
            "(default: $SPYGLASS_STORE, or the embedded store in the data directory); a password "
            "in $SPYGLASS_STORE, not here, where ps shows it",
        )
        self.state = self._parent(
            "--state",
            metavar="ADDRESS",
            help="where the accounts, keys, credits, organizations, alerts, scans and saved queries "
            "live: postgresql://USER@HOST[:PORT]/DB, shared by every backend given it "
            "(default: $SPYGLASS_STATE, or SQLite in the data directory); its password in "
            "$SPYGLASS_STATE or ~/.pgpass, not here, where ps shows it. Bulk-data files stay in "
            "each backend's data directory",
        )
        self.profile = self._parent(
            "--profile", metavar="NAME", help="connection profile to use (default: the active one)"
        )
        self.json = self._parent("--json", action="store_true", help="print the API's JSON")
        self.pane = self._parent(
            "--pane",
            nargs="+",
            action=PaneAction,
            metavar=("NAME", "ARG"),
            help="open the dashboard on pane NAME (search, host, geo, account, ...), "
            "with ARG filled in and run, e.g. --pane host 198.18.0.1",
        )

    @staticmethod
    def _parent(*flags: str, **options: Any) -> argparse.ArgumentParser:
        parent = argparse.ArgumentParser(add_help=False)
        parent.add_argument(*flags, default=argparse.SUPPRESS, **options)
        return parent

    @staticmethod
    def usage(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
        """The command of a group with no action given: its help on stderr, exit 2."""

        def show(args: argparse.Namespace) -> int:
            parser.print_help(sys.stderr)
            return EXIT_USAGE

        return show

    @property
    def api(self) -> list[argparse.ArgumentParser]:
        """What every command that calls an API takes."""
        return [self.profile, self.data, self.json]


async def explain_not_found(clients: Clients, exc: Exception, namespace: str) -> Exception:
    """A 404 for a method the server does not have (not for a missing address or id) says which
    namespace the server answers under, or that none of those known."""
    from spyglass.client.errors import NotFound

    if "no such method" not in str(exc).lower():
        return exc
    found = await clients.find_namespace()
    if found is None or found == namespace:
        hint = f"this server has no /{namespace}/ methods: is it a spyglass or original-service API?"
    else:
        hint = (
            f"this server's methods are under /{found}/, not /{namespace}/: "
            f"set SPYGLASS_NAMESPACE={found} (or spyglass profile add NAME --namespace {found})"
        )
    return NotFound(f"{exc}; {hint}", 404)


async def with_clients(args: argparse.Namespace, work: Callable[[Clients], Awaitable[int]], host: str = "main") -> int:
    """Run ``work(clients)`` against the chosen profile, starting the embedded backend if needed.

    A refused key is reported with the URL and the profile that were used (``host`` names which).
    """
    from spyglass.client.errors import AuthenticationError, ConnectFailed
    from spyglass.config import active_profile

    chosen = profile = active_profile(args.profile)
    backend = None
    if profile.embedded:
        from spyglass.local.launcher import EmbeddedBackend

        if args.data is not None and not Path(args.data).exists():  # a slip would answer from new demo data
            raise UsageError(
                f"--data {args.data}: no such folder (spyglass import --data DIR, serve or the dashboard make one)"
            )

        backend = EmbeddedBackend.for_profile(profile, args.data)
        profile = backend.start()
        await backend.wait_ready()
    try:
        try:
            return await _work_with(profile, work)
        except ConnectFailed as exc:
            if backend is None or not backend.attached or not getattr(exc, "nothing_reached", False):
                raise
            # The data dir's backend (a dashboard's) was gone by the time it was asked, and one
            # restarted at another address: nothing took the request, so it goes to that one.
            backend = EmbeddedBackend.for_profile(chosen, args.data)
            profile = backend.start()
            await backend.wait_ready()
            return await _work_with(profile, work)
    except AuthenticationError as exc:
        if not profile.key:  # the server's words are for HTTP clients ("pass it as the query parameter")
            from spyglass.config import ENV_KEY

            raise AuthenticationError(
                f"{profile.base(host)} needs an API key: set {ENV_KEY}, or give the profile {profile.name!r} "
                "one (spyglass profile add NAME --url URL --key KEY)",
                exc.status,
            ) from None
        raise AuthenticationError(f"{exc}: {profile.base(host)} refused {profile.key_source()}", exc.status) from None
    finally:
        if backend:
            backend.stop()


async def _work_with(profile, work: Callable[[Clients], Awaitable[int]]) -> int:
    from spyglass.client import Clients
    from spyglass.client.errors import ConnectFailed, NotFound

    async with Clients.from_profile(profile) as clients:
        try:
            return await work(clients)
        except NotFound as exc:
            raise await explain_not_found(clients, exc, profile.namespace) from None
        except ConnectFailed as exc:  # said when no call got through: running it again repeats nothing
            exc.nothing_reached = not clients.reachability.ever  # type: ignore[attr-defined]
            raise


def api_command(
    render: Callable[[Clients, argparse.Namespace], Awaitable[object]], host: str = "main"
) -> Callable[[argparse.Namespace], Awaitable[int]]:
    """A command from ``render(clients, args)``: what it returns is printed as JSON."""

    async def run(args: argparse.Namespace) -> int:
        async def work(clients: Clients) -> int:
            from spyglass.cli.render import print_json

            result = await render(clients, args)
            if result is not None:
                print_json(result)
            return EXIT_OK

        return await with_clients(args, work, host)

    return run


def store_address(args: argparse.Namespace) -> str:
    """The banner store ``--store`` or $SPYGLASS_STORE names; "" for the embedded one."""
    import os

    from spyglass.server.stores import ENV_STORE

    return getattr(args, "store", None) or os.environ.get(ENV_STORE, "")


def state_address(args: argparse.Namespace) -> str:
    """The state ``--state`` or $SPYGLASS_STATE names; "" for SQLite in the data dir."""
    import os

    from spyglass.server.stores import ENV_STATE

    return getattr(args, "state", None) or os.environ.get(ENV_STATE, "")


def passwords_in_argv(args: argparse.Namespace) -> list[str]:
    """A warning for each of --store and --state given with a password: the command line is in
    ps and /proc for every user of the machine, for as long as the process runs. The environment
    or a password file (PostgreSQL's ~/.pgpass, $PGPASSFILE) keeps it."""
    from urllib.parse import urlsplit

    said = []
    for option, env in (("store", "SPYGLASS_STORE"), ("state", "SPYGLASS_STATE")):
        try:
            password = urlsplit(getattr(args, option, None) or "").password
        except ValueError:
            password = None
        if password:
            said.append(
                f"spyglass: warning: the password in --{option} is seen by every user of this machine (ps): "
                f"give the address in ${env} instead, or leave the password out of it and keep it in a password "
                "file (PostgreSQL: ~/.pgpass or $PGPASSFILE)"
            )
    return said


def open_store(args: argparse.Namespace, command: str, data_dir: Path) -> Any:
    """The banner store --store or $SPYGLASS_STORE names (the embedded one in ``data_dir`` when
    none), or the exit code after one line saying why it cannot be used."""
    from spyglass.cli.exits import EXIT_UNAVAILABLE, fail
    from spyglass.server.banners.store import StoreUnavailable
    from spyglass.server.stores import open_banner_store

    try:
        return open_banner_store(store_address(args), data_dir)
    except StoreUnavailable as exc:
        return fail(f"{command}: {exc}", EXIT_UNAVAILABLE)
    except ValueError as exc:
        return fail(f"{command}: {exc}", EXIT_USAGE)
