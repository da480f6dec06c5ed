"""DNS from this machine with dnspython (which reads /etc/resolv.conf, not /etc/hosts)."""

from __future__ import annotations

import dns.asyncresolver
import dns.exception
import dns.rdatatype
import dns.resolver
import dns.reversename

from spyglass.models import DnsRecord, DnsResult, GeoLocation
from spyglass.netools.targets import is_ip

RECORD_TYPES = ("A", "AAAA", "CNAME", "NS", "SOA", "MX", "TXT", "PTR", "SRV", "CAA")
_NAME_TYPES = {"CNAME", "NS", "PTR"}


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


class Resolver:
    """A resolver bound to given name servers (or the system's), with a total timeout."""

    def __init__(self, nameservers: list[str] | None = None, port: int = 53, timeout: float = 3.0) -> None:
        self._resolver = dns.asyncresolver.Resolver(configure=not nameservers)
        if nameservers:
            self._resolver.nameservers = nameservers
        self._resolver.port = port
        self._resolver.lifetime = timeout

    async def query(self, hostname: str, rtype: str, location: GeoLocation) -> DnsResult:
        """Look up ``hostname``. NXDOMAIN, no answer and timeouts are answers with a ``status``."""
        rtype = rtype.upper()
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
        records = [DnsRecord(type=dns.rdatatype.to_text(r.rdtype), value=record_value(dns.rdatatype.to_text(r.rdtype), r))
                   for r in answer]
        return DnsResult(answers=records, from_loc=location, status="NOERROR")
