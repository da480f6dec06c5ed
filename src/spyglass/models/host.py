from __future__ import annotations

from pydantic import Field

from spyglass.models.banner import Banner, Raw, member
from spyglass.models.base import APIModel


class HostRecord(APIModel):
    """Everything known about one address: general information plus its banners.

    Like a banner's, its members come from banners in the wild and are kept as sent; only the
    address and the list of banners are typed.
    """

    ip: Raw = member("integer, numeric form of the IPv4 address")
    ip_str: str
    asn: Raw = member("string of form AS<number>")
    isp: Raw = member("string or null")
    org: Raw = member("string or null")
    os: Raw = member("string or null")
    hostnames: Raw = member("array of string")
    domains: Raw = member("array of string")
    ports: Raw = member("array of integer")
    tags: Raw = member("array of string")
    vulns: Raw = member("array of vulnerability ids")
    last_update: Raw = member("timestamp of the newest banner")
    data: list[Banner] = Field(default_factory=list)
    seen: Raw = member(
        "what scans saw besides open services, newest run first (absent if nothing): a host's status and "
        "each port not open, each {ip_str, port, transport, timestamp, seen: {kind (host, port), state, "
        "reason, ttl, scan, tool, version, file, and of a host open, args, extraports}}"
    )
    city: Raw = member("string or null")
    region_code: Raw = member("string or null")
    area_code: Raw = member("integer or null")
    dma_code: Raw = member("integer or null")
    postal_code: Raw = member("string or null")
    country_code: Raw = member("2-letter country code")
    country_code3: Raw = member("string or null")
    country_name: Raw = member("string")
    latitude: Raw = member("number")
    longitude: Raw = member("number")
