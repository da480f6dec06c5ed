"""DNS from this machine.

A plain name (the address of a name to ping; its A or AAAA records) is asked of the system's
resolver first (getaddrinfo: /etc/hosts, then whatever the system uses), so ``localhost`` and
local names resolve as every other program on this machine sees them. dnspython, which reads
/etc/resolv.conf and ignores /etc/hosts, answers the other record types, what the system does not
know, and everything when name servers are given.
"""

from __future__ import annotations

import asyncio
import socket

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


async def system_addresses(name: str, family: int = socket.AF_UNSPEC) -> list[str]:
    """The addresses the system's resolver gives ``name`` (IPv4 first), or [] if it knows none."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(name, None, family=family, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return []
    found = [str(info[4][0]) for info in infos if info[0] in (socket.AF_INET, socket.AF_INET6)]
    return sorted(dict.fromkeys(found), key=lambda address: ":" in address)


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
        import os

        if os.environ.get(variable):
            host, port = parse_nameserver(os.environ[variable])
            return cls([host], port)
        return cls()

    def __init__(self, nameservers: list[str] | None = None, port: int = 53, timeout: float = 3.0) -> None:
        self.system_first = not nameservers  # given name servers are asked, and nothing else
        self._resolver = dns.asyncresolver.Resolver(configure=not nameservers)
        if nameservers:
            self._resolver.nameservers = nameservers
        self._resolver.port = port
        self._resolver.lifetime = timeout

    async def address_of(self, hostname: str) -> str | None:
        """The first IPv4 (else IPv6) address of ``hostname``, or None if it has none."""
        if self.system_first and (found := await system_addresses(hostname)):
            return found[0]
        for rtype in ("A", "AAAA"):
            try:
                answer = await self._resolver.resolve(hostname, rtype, search=False)
            except dns.exception.DNSException:
                continue
            for rdata in answer:
                return rdata.address
        return None

    async def query(self, hostname: str, rtype: str, location: GeoLocation) -> DnsResult:
        """Look up ``hostname``. NXDOMAIN, no answer and timeouts are answers with a ``status``."""
        rtype = rtype.upper()
        if self.system_first and rtype in _ADDRESS_FAMILIES and not is_ip(hostname):
            found = await system_addresses(hostname, _ADDRESS_FAMILIES[rtype])
            if found:
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
