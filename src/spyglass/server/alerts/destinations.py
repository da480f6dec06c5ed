"""Where a notification may be sent: not into the backend's own networks, unless the operator says so.

A webhook URL is the account holder's to choose, so without this rule any account could make the
server send requests to its loopback, private or link-local neighbours, in any spelling
(``2130706433``, ``0x7f000001``, ``127.1``, ``[::ffff:127.0.0.1]``, ``[2002:7f00:1::]``, a name
that resolves there) and read what answered from the notifier test. So a destination's name is
resolved, every address it resolves to must be public or inside ``serve --notifier-allow CIDR``
(the rule of :mod:`spyglass.netools.networks`), and the request goes to the address that was
checked (a second lookup could answer otherwise). This is checked when a notifier is created or
changed and again at every send. A name that does not resolve and one that resolves inside are
refused in the same words, so that the notifier test is no oracle for internal names.

Names are looked up with the backend's resolver (``serve --nameserver``), which waits at most its
timeout and holds no thread meanwhile: a name whose server never answers costs its own
notification that timeout, and nobody else anything.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from spyglass.netools.dns import LookupTimedOut, Resolver
from spyglass.netools.networks import Address, Reach, parse_address
from spyglass.netools.targets import bad_address, is_hostname


class Refused(ValueError):
    """The destination lies in a network notifications may not reach (or cannot be resolved)."""

    def __init__(self, message: str, retry: bool = False) -> None:
        super().__init__(message)
        self.retry = retry  # the name server did not answer: a later try may go through


@dataclass(frozen=True)
class Pinned:
    """A URL to request with its host replaced by the address that was checked."""

    url: str
    host: str  # the Host header and the TLS server name: the name the URL gave
    auth: tuple[str, str] | None  # the URL's user:password, sent as Basic authentication
    contacted: str = ""  # the address and port the request goes to ("127.0.0.1:80", "[::1]:443")


def refused(host: str) -> str:
    """The one answer for an internal destination and a name with no address alike."""
    return f"{host} is not a destination this backend sends notifications to"


class Destinations:
    def __init__(self, reach: Reach, resolver: Resolver | None = None) -> None:
        self.reach = reach
        self.resolver = resolver or Resolver()

    def permitted(self, address: Address) -> bool:
        return self.reach.permitted(address)

    async def pin(self, url: str) -> Pinned:
        """The URL aimed at a checked address of its host; :class:`Refused` if none may be used."""
        parts = urlsplit(url)
        host, literal = _host(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            addresses = literal or [parse_address(a) for a in await self.resolver.addresses(host)]
        except LookupTimedOut:
            raise Refused(refused(host), retry=True) from None
        if not addresses or not all(self.permitted(a) for a in addresses):
            raise Refused(refused(host))
        auth = (parts.username or "", parts.password or "") if parts.username is not None else None
        shown = f"[{addresses[0]}]" if addresses[0].version == 6 else str(addresses[0])
        return Pinned(_with_host(parts, addresses[0], port), parts.netloc.rpartition("@")[2], auth, f"{shown}:{port}")

    def check_literal(self, url: str) -> None:
        """At create and edit, without a lookup: the check :meth:`pin` makes of the URL's host
        (the same words), but for the lookup of a name, which every send makes."""
        host, literal = _host(url)
        name = host.rstrip(".")
        if literal is None and (name in LOOPBACK_NAMES or name.endswith(".localhost")):
            literal = [parse_address("127.0.0.1")]
        if literal is not None and not all(self.permitted(a) for a in literal):
            raise Refused(refused(host))


# Names of loopback on every system (RFC 6761, and Debian's /etc/hosts for IPv6), refused at create
# as at the send; any other name is looked up at each send (ip6-localhost was taken: attacker trial 7)
LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")


def _host(url: str) -> tuple[str, list[Address] | None]:
    """The URL's host and, where it is an address (in any spelling the system's resolver reads:
    ``127.1``, ``2130706433``), that address; :class:`Refused` for a host that is neither an address
    nor a name a lookup could take (a zone ``%lo``, ``127.0.0.1.``, an encoded byte), which
    :meth:`Destinations.pin` would only refuse at the send."""
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        raise Refused("the URL names no host")
    if "\\" in parts.netloc:  # `http://127.0.0.1\@x/`: a host one parser reads as 127.0.0.1, another as x
        raise Refused(refused(host))
    if "%" not in host:  # a zone (or an encoded byte) in an address is no destination
        try:
            infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
        except (OSError, UnicodeError):
            pass
        else:
            return host, [parse_address(str(info[4][0])) for info in infos]
        try:
            if is_hostname(host.encode("idna").decode()) and not bad_address(host):
                return host, None
        except UnicodeError:
            pass
    raise Refused(refused(host))


def _with_host(parts: SplitResult, address: Address, port: int) -> str:
    shown = f"[{address}]" if address.version == 6 else str(address)
    netloc = f"{shown}:{port}"  # user:password@ goes in Pinned.auth
    return parts._replace(netloc=netloc).geturl()
