"""The banner record: one service seen on one port at one time.

Banners are untyped JSON from the wild. Only the address (``ip``/``ip_str``/``ipv6``), ``port``,
``transport`` and ``timestamp`` are typed; every other member is kept exactly as it came, whatever
its JSON type (a float certificate serial, an int ``asn``, a list of ``vulns``, a string ``ssl``):
validation never fails on it, and :meth:`Banner.to_api` gives back the body that was read.
Whoever shows a member reads it defensively (``spyglass.present``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from spyglass.models.base import APIModel


def member(description: str) -> Any:
    """A banner member documented by the seed but kept as raw JSON: real data breaks every type."""
    return Field(default=None, description=f"{description} (any JSON type is accepted and kept as sent)")


# The crawler member is ``_<namespace>`` (``_intel`` by default, the product name on the original).
CRAWLER_KEYS = ("crawler", "module")

Raw = Annotated[Any, "raw JSON"]


class Banner(APIModel):
    """A banner record; module-specific members (``mongodb``, ``rdp``...) are kept as extras."""

    ip: Raw = member("integer, numeric form of the IPv4 address")
    ip_str: str | None = Field(default=None, description="dotted IPv4 address (absent on IPv6 banners)")
    ipv6: str | None = Field(default=None, description="IPv6 address (IPv6 banners)")
    port: int
    transport: str = "tcp"
    timestamp: str
    hash: Raw = member("integer (may be negative)")
    hostnames: Raw = member("array of string")
    domains: Raw = member("array of string")
    org: Raw = member("string or null")
    isp: Raw = member("string or null")
    asn: Raw = member("string of form AS<number>")
    os: Raw = member("string or null")
    data: Raw = member("raw banner text")
    product: Raw = member("string")
    version: Raw = member("string")
    info: Raw = member("string")
    cpe: Raw = member("array of string")
    cpe23: Raw = member("array of string")
    tags: Raw = member("array of string")
    location: Raw = member("Location object")
    http: Raw = member("object: status, title, server, html, redirects, favicon, components, waf, ...")
    ssl: Raw = member("object: chain, jarm, ja3s, dhparams, versions, alpn, cert, cipher, trust, ocsp")
    ssh: Raw = member("object: hassh, fingerprint, mac, cipher, key, type, kex")
    ntp: Raw = member("module-specific object")
    dns: Raw = member("module-specific object")
    vulns: Raw = member("object keyed by vulnerability id: verified, references, cvss, summary")
    cloud: Raw = member("object: provider, service, region")
    opts: Raw = member("object of module-specific extras (raw, vulns, heartbleed, ...)")
    id_: str | None = Field(default=None, alias="_id", description="present in stream items")

    @property
    def address(self) -> str:
        """The address as text, whichever member carries it."""
        if self.ip_str or self.ipv6:
            return self.ip_str or self.ipv6 or ""
        return str(self.ip) if isinstance(self.ip, (int, str)) and not isinstance(self.ip, bool) else ""

    @property
    def meta(self) -> dict | None:
        """The crawler member (``_intel``, or another namespace's ``_<name>``), if it is an object."""
        for name, value in (self.model_extra or {}).items():
            if name.startswith("_") and isinstance(value, dict) and any(k in value for k in CRAWLER_KEYS):
                return value
        return None

    @property
    def module(self) -> str | None:
        meta = self.meta
        value = meta.get("module") if meta else None
        return value if isinstance(value, str) else None
