"""DNS from this machine, never waiting longer than the resolver's timeout.

A plain name (the address of a name to ping or to send a notification to; its A or AAAA records)
is looked up in the hosts file first, so ``localhost`` and local names resolve as every other
program on this machine sees them. dnspython, which reads /etc/resolv.conf and ignores /etc/hosts,
answers the rest, and everything when name servers are given. Nothing here blocks a thread:
``getaddrinfo`` would (for as long as the system's resolver retries, in the event loop's one
default executor, which every ``asyncio.to_thread`` of the process shares), so one name whose
server never answers could hold up every other request.
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import dns.asyncresolver
import dns.exception
import dns.rdatatype
import dns.resolver
import dns.reversename

from spyglass.models import DnsRecord, DnsResult, GeoLocation
from spyglass.netools.targets import is_ip

RECORD_TYPES = ("A", "AAAA", "CNAME", "NS", "SOA", "MX", "TXT", "PTR", "SRV", "CAA")
_NAME_TYPES = {"CNAME", "NS", "PTR"}
_ADDRESS_FAMILIES = {"A": socket.AF_INET, "AAAA": socket.AF_INET6}


HOSTS = Path("/etc/hosts")
_hosts_cache: dict[str, tuple[tuple[int, int], dict[str, list[str]]]] = {}


def hosts_addresses(name: str, family: int = socket.AF_UNSPEC) -> list[str]:
    """The addresses the hosts file gives ``name`` (IPv4 first), or [] if it names none."""
    wanted = {int(socket.AF_INET): 4, int(socket.AF_INET6): 6}.get(int(family))
    found = [a for a in _hosts().get(name.lower().rstrip("."), []) if wanted is None or _version(a) == wanted]
    return sorted(dict.fromkeys(found), key=lambda address: ":" in address)


def _hosts() -> dict[str, list[str]]:
    """The hosts file as name -> addresses, read again only when it changes."""
    try:
        stat = os.stat(HOSTS)
    except OSError:
        return {}
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _hosts_cache.get(str(HOSTS))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    table: dict[str, list[str]] = {}
    try:
        text = HOSTS.read_text(errors="replace")
    except OSError:
        return {}
    for line in text.splitlines():
        address, *names = line.split("#", 1)[0].split() or [""]
        address = address.split("%")[0]
        if names and is_ip(address):
            for host in names:
                table.setdefault(host.lower().rstrip("."), []).append(address)
    _hosts_cache[str(HOSTS)] = (stamp, table)
    return table


def _version(address: str) -> int:
    return 6 if ":" in address else 4


class LookupTimedOut(TimeoutError):
    """The name server gave no answer within the resolver's timeout."""


def record_value(rtype: str, rdata) -> str:
    """The record's value as people write it: names without the root dot, TXT unquoted."""
    if rtype in _NAME_TYPES:
        return rdata.target.to_text().rstrip(".")
    if rtype == "MX":
        return f"{rdata.preference} {rdata.exchange.to_text().rstrip('.')}"
    if rtype == "SRV":
        return f"{rdata.priority} {rdata.weight} {rdata.port} {rdata.target.to_text().rstrip('.')}"
    if rtype == "TXT":
        return "".join(part.decode("utf-8", errors="replace") for part in rdata.strings)
    return rdata.to_text()


def parse_nameserver(text: str) -> tuple[str, int]:
    """``HOST`` or ``HOST:PORT`` (``[v6]:PORT`` for IPv6) as (host, port)."""
    if text.startswith("["):
        host, _, port = text[1:].partition("]:")
        return host.rstrip("]"), int(port or 53)
    if text.count(":") == 1:
        host, port = text.split(":")
        return host, int(port)
    return text, 53


class Resolver:
    """A resolver bound to given name servers (or the system's), with a total timeout."""

    @classmethod
    def from_env(cls, variable: str = "SPYGLASS_NAMESERVER") -> Resolver:
        """The name server in ``variable`` (HOST[:PORT]) if set, else the system's."""
        if os.environ.get(variable):
            host, port = parse_nameserver(os.environ[variable])
            return cls([host], port)
        return cls()

    def __init__(self, nameservers: list[str] | None = None, port: int = 53, timeout: float = 3.0) -> None:
        self.hosts_first = not nameservers  # given name servers are asked, and nothing else
        self._resolver = dns.asyncresolver.Resolver(configure=not nameservers)
        if nameservers:
            self._resolver.nameservers = nameservers
        self._resolver.port = port
        self._resolver.lifetime = timeout

    async def addresses(self, hostname: str) -> list[str]:
        """Every address of ``hostname`` (IPv4 first; A and AAAA asked at once), [] if it has none;
        :class:`LookupTimedOut` if the name server answered neither within the timeout."""
        if is_ip(hostname):
            return [hostname]
        if self.hosts_first and (found := hosts_addresses(hostname)):
            return found
        answers = await asyncio.gather(*(self._addresses(hostname, rtype) for rtype in ("A", "AAAA")))
        if all(answer is None for answer in answers):
            raise LookupTimedOut(f"no answer for {hostname} within {self._resolver.lifetime:g} s")
        return [address for answer in answers for address in answer or []]

    async def _addresses(self, hostname: str, rtype: str) -> list[str] | None:
        """The ``rtype`` addresses of ``hostname``; None when the name server did not answer."""
        try:
            answer = await self._resolver.resolve(hostname, rtype, search=False)
        except dns.exception.Timeout:
            return None
        except dns.exception.DNSException:
            return []
        return [rdata.address for rdata in answer]

    async def address_of(self, hostname: str) -> str | None:
        """The first IPv4 (else IPv6) address of ``hostname``, or None if it has none (or no answer came)."""
        try:
            found = await self.addresses(hostname)
        except LookupTimedOut:
            return None
        return found[0] if found else None

    async def query(self, hostname: str, rtype: str, location: GeoLocation) -> DnsResult:
        """Look up ``hostname``. NXDOMAIN, no answer and timeouts are answers with a ``status``."""
        rtype = rtype.upper()
        if self.hosts_first and not is_ip(hostname) and hosts_addresses(hostname):
            # a name of the hosts file exists here with its addresses and nothing else (no MX, no
            # TXT), as every program on this machine sees it: not NXDOMAIN from a DNS server
            found = hosts_addresses(hostname, _ADDRESS_FAMILIES[rtype]) if rtype in _ADDRESS_FAMILIES else []
            return DnsResult(
                answers=[DnsRecord(type=rtype, value=a) for a in found], from_loc=location, status="NOERROR"
            )
        name = dns.reversename.from_address(hostname) if rtype == "PTR" and is_ip(hostname) else hostname
        try:
            answer = await self._resolver.resolve(name, rtype, search=False)
        except dns.resolver.NXDOMAIN:
            return DnsResult(answers=[], from_loc=location, status="NXDOMAIN")
        except dns.resolver.NoAnswer:
            return DnsResult(answers=[], from_loc=location, status="NOERROR")
        except dns.resolver.NoNameservers:
            return DnsResult(answers=[], from_loc=location, status="SERVFAIL")
        except dns.exception.Timeout:
            return DnsResult(answers=[], from_loc=location, status="TIMEOUT")
        except dns.exception.DNSException as exc:
            return DnsResult(answers=[], from_loc=location, status="ERROR", error=str(exc))
        records = []
        for rdata in answer:
            kind = dns.rdatatype.to_text(rdata.rdtype)
            records.append(DnsRecord(type=kind, value=record_value(kind, rdata)))
        return DnsResult(answers=records, from_loc=location, status="NOERROR")
