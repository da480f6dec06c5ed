"""The search vocabulary: every filter and facet name, and what kind of value each takes."""

from __future__ import annotations

from enum import Enum


class Kind(str, Enum):
    TEXT = "text"  # words matched anywhere in the field, case-insensitive
    EXACT = "exact"  # the whole value, case-insensitive
    INT = "int"
    BOOL = "bool"
    DATE = "date"
    CIDR = "cidr"  # an address or a network
    COUNTRY = "country"
    ASN = "asn"
    SUFFIX = "suffix"  # a name or any domain it is under (hostname:example.com)
    PREFIX = "prefix"  # a CPE or any of its leading parts (cpe:cpe:2.3:a:apache)


FILTERS: dict[str, Kind] = {
    "all": Kind.TEXT,
    "after": Kind.DATE,
    "asn": Kind.ASN,
    "before": Kind.DATE,
    "city": Kind.TEXT,
    "country": Kind.COUNTRY,
    "cpe": Kind.PREFIX,
    "domain": Kind.SUFFIX,
    "has_ipv6": Kind.BOOL,
    "has_screenshot": Kind.BOOL,
    "has_ssl": Kind.BOOL,
    "has_vuln": Kind.BOOL,
    "hash": Kind.INT,
    "hostname": Kind.SUFFIX,
    "http.component": Kind.EXACT,
    "http.component_category": Kind.EXACT,
    "http.favicon.hash": Kind.INT,
    "http.html_hash": Kind.INT,
    "http.robots_hash": Kind.INT,
    "http.securitytxt": Kind.TEXT,
    "http.status": Kind.INT,
    "http.title": Kind.TEXT,
    "http.waf": Kind.EXACT,
    "ip": Kind.CIDR,
    "isp": Kind.TEXT,
    "net": Kind.CIDR,
    "org": Kind.TEXT,
    "os": Kind.TEXT,
    "port": Kind.INT,
    "product": Kind.TEXT,
    "region": Kind.EXACT,
    "scan": Kind.EXACT,
    "screenshot.label": Kind.EXACT,
    "ssh.fingerprint": Kind.EXACT,
    "ssh.hassh": Kind.EXACT,
    "ssh.type": Kind.EXACT,
    "ssl": Kind.TEXT,
    "ssl.alpn": Kind.EXACT,
    "ssl.cert.expired": Kind.BOOL,
    "ssl.cert.fingerprint": Kind.EXACT,
    "ssl.cert.issuer.cn": Kind.TEXT,
    "ssl.cert.serial": Kind.EXACT,
    "ssl.cert.subject.cn": Kind.TEXT,
    "ssl.ja3s": Kind.EXACT,
    "ssl.jarm": Kind.EXACT,
    "ssl.version": Kind.EXACT,
    "state": Kind.EXACT,
    "tag": Kind.EXACT,
    "title": Kind.TEXT,
    "transport": Kind.EXACT,
    "version": Kind.EXACT,
    "vuln": Kind.EXACT,
}

FACETS: tuple[str, ...] = (
    "asn", "city", "country", "domain", "has_screenshot", "hash", "http.component",
    "http.component_category", "http.favicon.hash", "http.html_hash", "http.robots_hash",
    "http.status", "http.title", "http.waf", "ip", "isp", "mongodb.database.name", "org", "os",
    "port", "product", "redis.key", "region", "rsync.module", "screenshot.label",
    "ssh.fingerprint", "ssh.hassh", "ssh.type", "ssl.alpn", "ssl.cert.expired", "ssl.cert.fingerprint", "ssl.cert.issuer.cn",
    "ssl.cert.serial", "ssl.cert.subject.cn", "ssl.ja3s", "ssl.jarm", "ssl.version", "state",
    "tag", "transport", "version", "vuln", "vuln.verified",
)

DEFAULT_FACET_SIZE = 10
MAX_FACET_SIZE = 1000
