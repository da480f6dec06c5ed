"""The search vocabulary: every filter and facet name, and what kind of value each takes."""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
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
    "host.open": Kind.INT,  # of host.state: how many ports the run found open on the host
    "host.state": Kind.EXACT,  # what a scan saw of a host: up, down (server/banners/seen.py)
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
    "os.accuracy": Kind.INT,  # the most accurate OS class's (nmap -O: 0 to 100)
    "os.family": Kind.EXACT,
    "os.generation": Kind.EXACT,
    "os.type": Kind.EXACT,
    "os.vendor": Kind.EXACT,
    "port": Kind.INT,
    "port.state": Kind.EXACT,  # a port a scan saw not open: closed, filtered, unfiltered, open|filtered...
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

# Filters of what scans saw besides open services (hosts up, ports closed or filtered: rows of their
# own, server/banners/seen.py), not of banners: no banner matches one (each negated matches every
# banner), and a query with host.state or port.state is answered from those rows.
SEEN_FILTERS: frozenset[str] = frozenset({"host.open", "host.state", "port.state"})

FACETS: tuple[str, ...] = (
    "asn",
    "city",
    "country",
    "domain",
    "has_screenshot",
    "hash",
    "http.component",
    "http.component_category",
    "http.favicon.hash",
    "http.html_hash",
    "http.robots_hash",
    "http.status",
    "http.title",
    "http.waf",
    "ip",
    "isp",
    "mongodb.database.name",
    "org",
    "os",
    "os.accuracy",
    "os.family",
    "os.generation",
    "os.type",
    "os.vendor",
    "port",
    "product",
    "redis.key",
    "region",
    "rsync.module",
    "screenshot.label",
    "ssh.fingerprint",
    "ssh.hassh",
    "ssh.type",
    "ssl.alpn",
    "ssl.cert.expired",
    "ssl.cert.fingerprint",
    "ssl.cert.issuer.cn",
    "ssl.cert.serial",
    "ssl.cert.subject.cn",
    "ssl.ja3s",
    "ssl.jarm",
    "ssl.version",
    "state",
    "tag",
    "transport",
    "version",
    "vuln",
    "vuln.verified",
)

# Facets whose values name a host or a banner (an address, a hash, a fingerprint, a certificate,
# a host name): listing them reads search results, so a request with one costs what a search does
# (a query credit), also a count, which is otherwise free.
IDENTIFYING_FACETS: frozenset[str] = frozenset(
    {
        "hash",
        "http.favicon.hash",
        "http.html_hash",
        "http.robots_hash",
        "ip",
        "ssh.fingerprint",
        "ssh.hassh",
        "ssl.cert.fingerprint",
        "ssl.cert.serial",
        "ssl.cert.subject.cn",
        "ssl.ja3s",
        "ssl.jarm",
    }
)

DEFAULT_FACET_SIZE = 10
MAX_FACET_SIZE = 1000

# What one query may ask, so that no query (count is free) costs the server much time or memory.
# The parser refuses more with an error naming the filter and the cap: server, TUI and CLI alike.
MAX_FILTER_VALUES = 100  # values of one filter (cpe:a,b,c... is three)
MAX_QUERY_VALUES = 250  # words, phrases and filter values of the whole query
# Read of one query at most, repeats included (they merge: 1,000 copies of a network are one):
# past them the rest is not read. 15,000 words were all parsed before the cap refused them, 150-325
# ms of the server each, and 20 free accounts sending them took another's p95 to 2.1 s (trial 8).
MAX_QUERY_READ = 4 * MAX_QUERY_VALUES
MAX_VALUE_CHARS = 256  # characters of one value, word or phrase
# A prefix value (cpe:) is matched by an automaton built per query whose memory grows with each
# character: their characters together are capped, so many such queries at once stay affordable.
MAX_PREFIX_CHARS = 4096

# One query per filter that finds banners in the demo data (``spyglass generate``, seed 1, and
# the embedded backend's first-run data); tests/unit/test_query_examples.py keeps them true. Those
# of SEEN_FILTERS find what runs saw, which the demo data has none of (tests/store/test_seen.py).
FILTER_EXAMPLES: dict[str, str] = {
    "after": "after:2026-01-01",
    "all": "all:nginx",
    "asn": "asn:AS64512",
    "before": "before:2025-06-01",
    "city": "city:amsterdam",
    "country": "country:DE",
    "cpe": "cpe:cpe:2.3:a:nginx",
    "domain": "domain:aurora-tv.example",
    "has_ipv6": "has_ipv6:false",
    "has_screenshot": "has_screenshot:true",
    "has_ssl": "has_ssl:true",
    "has_vuln": "has_vuln:true",
    "hash": "hash:1016399811",
    "host.open": "host.open:0",
    "host.state": "host.state:up",
    "hostname": "hostname:aurora-tv.example",
    "http.component": "http.component:jquery",
    "http.component_category": 'http.component_category:"JavaScript libraries"',
    "http.favicon.hash": "http.favicon.hash:724157175",
    "http.html_hash": "http.html_hash:295872201",
    "http.robots_hash": "http.robots_hash:-97654124",
    "http.securitytxt": "http.securitytxt:contact",
    "http.status": "http.status:404",
    "http.title": 'http.title:"welcome to nginx"',
    "http.waf": "http.waf:cloudflare",
    "ip": "ip:198.18.232.198",
    "isp": 'isp:"meridian telecom"',
    "net": "net:198.18.0.0/20",
    "org": 'org:"orchid retail group"',
    "os": "os:debian",
    "os.accuracy": "os.accuracy:100",
    "os.family": "os.family:windows",
    "os.generation": "os.generation:5.x",
    "os.type": 'os.type:"general purpose"',
    "os.vendor": "os.vendor:freebsd",
    "port": "port:22",
    "port.state": "port.state:filtered",
    "product": "product:openssh",
    "region": "region:VA",
    "scan": "scan:DEMOSCAN7Q2X",
    "screenshot.label": "screenshot.label:login",
    "ssh.fingerprint": "ssh.fingerprint:90:65:fa:df:b2:f6:1a:21:19:78:c1:7a:f0:24:e1:1f",
    "ssh.hassh": "ssh.hassh:9d783c36eaca5cd75cf4fc13ec2308d2",
    "ssh.type": "ssh.type:ssh-ed25519",
    "ssl": "ssl:example",
    "ssl.alpn": "ssl.alpn:h2",
    "ssl.cert.expired": "ssl.cert.expired:true",
    "ssl.cert.fingerprint": "ssl.cert.fingerprint:d87680286ea45222ee0dc712ff79529009897a65d032db95d89d7272de047a00",
    "ssl.cert.issuer.cn": 'ssl.cert.issuer.cn:"ETS R3"',
    "ssl.cert.serial": "ssl.cert.serial:13191523621787856602",
    "ssl.cert.subject.cn": "ssl.cert.subject.cn:aurora-tv.example",
    "ssl.ja3s": "ssl.ja3s:63ff0b333b4fc1111aa158f8a69131bd",
    "ssl.jarm": "ssl.jarm:d6bfb973e8029cbb91fa4eb4c15b47c0ac944d87633e8a133fcff2d8ee6e26",
    "ssl.version": "ssl.version:TLSv1.3",
    "state": "state:NY",
    "tag": "tag:database",
    "title": "title:login",
    "transport": "transport:udp",
    "version": "version:1.24.0",
    "vuln": "vuln:CVE-2021-41773",
}
