"""A deterministic synthetic banner dataset that looks like the real thing.

Hosts live in 198.18.0.0/15 (the benchmarking range); each has an organisation, a city and a
few services, each seen several times over two years. The same ``count`` and ``seed`` always
give the same banners, in the same order.
"""

from __future__ import annotations

import hashlib
import ipaddress
import random
from collections.abc import Iterator
from datetime import datetime, timedelta

from spyglass.datagen.world import CITIES, COMPONENTS, HTTP_TITLES, NAME_PREFIXES, ORGS, OS_CLASSES, UNIX, WINDOWS

NETWORK = ipaddress.ip_network("198.18.0.0/15")
END = datetime(2026, 10, 31, 23, 59, 59)
SPAN = timedelta(days=730)
CRAWLERS = [
    "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0",
    "0f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6",
    "5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d",
]
VULNS = {
    ("Apache httpd", "2.4.49"): [
        ("CVE-2021-41773", "7.5", True, "Path traversal and file disclosure in Apache HTTP Server 2.4.49.")
    ],
    ("Apache httpd", "2.4.50"): [
        (
            "CVE-2021-42013",
            "9.8",
            False,
            "Path traversal and remote code execution in Apache HTTP Server 2.4.49 and 2.4.50.",
        )
    ],
    ("OpenSSH", "7.4"): [
        ("CVE-2018-15473", "5.3", False, "User enumeration in OpenSSH through 7.7."),
        ("CVE-2016-10012", "7.8", False, "Privilege escalation via the shared memory manager."),
    ],
    ("nginx", "1.16.1"): [("CVE-2019-20372", "5.3", False, "HTTP request smuggling with error_page.")],
    ("Exim smtpd", "4.87"): [("CVE-2019-10149", "9.8", True, "Remote command execution in deliver_message().")],
    ("Redis key-value store", "4.0.9"): [
        ("CVE-2018-11218", "9.8", False, "Memory corruption in the cmsgpack library.")
    ],
    ("ProFTPD", "1.3.5"): [("CVE-2015-3306", "10.0", True, "Unauthenticated file copy via mod_copy.")],
    ("MySQL", "5.5.62"): [("CVE-2020-14812", "4.9", False, "Denial of service in the locking component.")],
}


def _hex(*parts: object, n: int = 64) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:n]


def _signed32(*parts: object) -> int:
    value = int(_hex(*parts, n=8), 16)
    return value - (1 << 32) if value >= 1 << 31 else value


# port, transport, module, product, versions, tags, weight
SERVICES = [
    (80, "tcp", "http", "Apache httpd", ["2.4.41", "2.4.49", "2.4.50", "2.4.57", "2.4.62"], [], 14),
    (80, "tcp", "http", "nginx", ["1.16.1", "1.18.0", "1.22.1", "1.24.0", "1.26.2"], [], 14),
    (8080, "tcp", "http", "Jetty", ["9.4.43", "10.0.18"], [], 3),
    (443, "tcp", "https", "nginx", ["1.18.0", "1.22.1", "1.24.0"], [], 12),
    (443, "tcp", "https", "Microsoft IIS httpd", ["8.5", "10.0"], [], 4),
    (8443, "tcp", "https", "lighttpd", ["1.4.45", "1.4.59"], ["iot"], 2),
    (5601, "tcp", "http", "Kibana", ["7.17.9", "8.11.0"], ["database"], 1),
    (3000, "tcp", "http", "Grafana", ["9.5.2", "10.2.0"], [], 1),
    (22, "tcp", "ssh", "OpenSSH", ["7.4", "8.2p1", "8.9p1", "9.3p1", "9.6p1"], [], 16),
    (21, "tcp", "ftp", "ProFTPD", ["1.3.5", "1.3.6", "1.3.8"], [], 3),
    (25, "tcp", "smtp", "Exim smtpd", ["4.87", "4.94.2", "4.96"], [], 4),
    (587, "tcp", "smtp", "Postfix smtpd", [""], [], 2),
    (993, "tcp", "imap-ssl", "Dovecot imapd", [""], [], 2),
    (3306, "tcp", "mysql", "MySQL", ["5.5.62", "5.7.44", "8.0.35"], ["database"], 4),
    (5432, "tcp", "postgresql", "PostgreSQL", ["12.17", "15.5", "16.1"], ["database"], 2),
    (27017, "tcp", "mongodb", "MongoDB", ["4.4.25", "6.0.12"], ["database"], 2),
    (6379, "tcp", "redis", "Redis key-value store", ["4.0.9", "6.2.14", "7.2.3"], ["database"], 2),
    (9200, "tcp", "elastic", "Elastic", ["7.17.9", "8.11.0"], ["database"], 1),
    (3389, "tcp", "rdp", "Remote Desktop Protocol", [""], [], 4),
    (23, "tcp", "telnet", "BusyBox telnetd", [""], ["iot"], 2),
    (502, "tcp", "modbus", "Modbus", [""], ["ics"], 1),
    (102, "tcp", "s7", "Siemens S7", [""], ["ics"], 1),
    (47808, "udp", "bacnet", "BACnet", [""], ["ics"], 1),
    (53, "udp", "dns-udp", "dnsmasq", ["2.80", "2.89"], [], 2),
    (123, "udp", "ntp", "NTP", [""], [], 2),
    (161, "udp", "snmp", "SNMP", [""], [], 1),
    (873, "tcp", "rsync", "rsyncd", ["3.1.3", "3.2.7"], [], 1),
    (1883, "tcp", "mqtt", "MQTT", [""], ["iot"], 1),
    (11211, "tcp", "memcached", "Memcached", ["1.5.6", "1.6.21"], ["database"], 1),
]
ROBOTS = "User-agent: *\nDisallow: /admin/\n"
DEMO_SCAN = "DEMOSCAN7Q2X"  # the on-demand scan some demo banners came from
_CITY_WEIGHTS = [c[-1] for c in CITIES]
_SERVICE_WEIGHTS = [s[-1] for s in SERVICES]


# The OS family a product runs on, where it runs on one only: a host never pairs IIS with Linux.
FAMILY = {
    "Microsoft IIS httpd": "windows",
    "Remote Desktop Protocol": "windows",
    **dict.fromkeys(
        [
            "OpenSSH",
            "Exim smtpd",
            "Postfix smtpd",
            "Dovecot imapd",
            "Redis key-value store",
            "BusyBox telnetd",
            "dnsmasq",
            "rsyncd",
            "lighttpd",
        ],
        "unix",
    ),
}
TLS_MODULES = {"https", "imap-ssl"}  # what carries an ``ssl`` member (and only these do)


class Host:
    """One address: who holds it, where, and what it runs. ``visit`` numbers the passes over the
    address range; each pass sees the same host at other times."""

    def __init__(self, index: int, seed: int, hosts: int, visit: int = 0) -> None:
        rng = random.Random(seed * 1_000_003 + index)
        self.rng = random.Random((seed * 1_000_003 + index) * 7919 + visit) if visit else rng
        self.visit = visit
        offset = (index * 2654435761) % NETWORK.num_addresses if hosts < NETWORK.num_addresses else index
        self.ip = int(NETWORK.network_address) + offset % NETWORK.num_addresses
        self.ip_str = str(ipaddress.ip_address(self.ip))
        self.city = rng.choices(CITIES, _CITY_WEIGHTS)[0]
        self.org = rng.choice(ORGS)
        kind, domain = self.org[3], self.org[4]
        self.domains = [domain]
        # A provider names its customers' hosts after their address; an organisation its own.
        label = self.ip_str.replace(".", "-") if kind in ("hosting", "cloud", "isp") else str(index % 9973)
        prefix = rng.choice(NAME_PREFIXES[kind])
        self.hostnames = [f"{prefix}-{label}.{domain}"] if rng.random() < 0.6 else []
        count = rng.choices([1, 2, 3, 4, 5], [30, 30, 20, 12, 8])[0]
        self.services: list[tuple[tuple, str]] = []
        family = None
        for service in rng.choices(SERVICES, _SERVICE_WEIGHTS, k=count):
            wants = FAMILY.get(service[3])
            if any(service[0] == port for (port, *_), _ in self.services) or (wants and family and wants != family):
                continue
            family = family or wants
            self.services.append((service, rng.choice(service[4])))
        self.os = rng.choice([None, None, *(WINDOWS if family == "windows" else UNIX)])
        if family is None and self.os in UNIX and rng.random() < 0.2:
            self.os = rng.choice(WINDOWS)  # a host of neutral services may run Windows too
        self.cloud = (
            {"provider": self.org[0], "region": f"{self.city[2].lower()}-1", "service": "compute"}
            if kind == "cloud"
            else None
        )


def generate(count: int, seed: int = 1, hosts: int | None = None, visit: int = 0) -> Iterator[dict]:
    """``count`` banners. About three per service, several services per host. ``hosts`` and
    ``visit`` name a dataset's hosts (by default ``generate(hosts * 6, seed)``'s) and the pass
    to start from: later passes rescan the same hosts."""
    hosts = max(1, min(NETWORK.num_addresses, hosts or count // 6))
    produced = 0
    index = visit * hosts
    while produced < count:
        host = Host(index % hosts, seed, hosts, visit=index // hosts)
        for service, version in host.services:
            for _ in range(host.rng.choice([1, 2, 3, 4])):
                if produced >= count:
                    return
                yield banner(host, service, version, produced)
                produced += 1
        index += 1


def banner(host: Host, service: tuple, version: str, n: int) -> dict:
    rng = host.rng
    port, transport, module, product, _, tags, _ = service
    when = END - timedelta(seconds=rng.random() * SPAN.total_seconds())
    city, region, cc, cc3, country, lat, lon, _ = host.city
    org, isp, asn, _, _ = host.org
    later = (host.visit,) if host.visit else ()  # a later pass numbers from 0 again: ids stay apart
    b: dict = {
        "ip": host.ip,
        "ip_str": host.ip_str,
        "port": port,
        "transport": transport,
        "timestamp": when.strftime("%Y-%m-%dT%H:%M:%S.%f"),
        "hostnames": host.hostnames,
        "domains": host.domains,
        "org": org,
        "isp": isp,
        "asn": f"AS{asn}",
        "os": host.os,
        "location": {
            "city": city,
            "region_code": region,
            "area_code": None,
            "dma_code": None,
            "postal_code": None,
            "country_code": cc,
            "country_code3": cc3,
            "country_name": country,
            "latitude": lat,
            "longitude": lon,
        },
        "_intel": {
            "id": _hex(host.ip, port, n, *later, n=8) + "-" + _hex(n, n=4),
            "module": module,
            "crawler": CRAWLERS[n % 3],
            "ptr": bool(host.hostnames),
            "options": {},
        },
        "opts": {},
    }
    if product:
        b["product"] = product
    if version:
        b["version"] = version
        vendor = product.split()[0].lower()
        b["cpe23"] = [f"cpe:2.3:a:{vendor}:{product.lower().replace(' ', '_')}:{version}"]
        b["cpe"] = [f"cpe:/a:{vendor}:{product.lower().replace(' ', '_')}:{version}"]
    if tags:
        b["tags"] = list(tags)
    if host.cloud:
        b["cloud"] = host.cloud
        b.setdefault("tags", []).append("cloud")
    vulns = VULNS.get((product, version))
    if vulns:
        b["vulns"] = {
            cve: {
                "verified": verified,
                "cvss": cvss,
                "summary": summary,
                "references": [f"https://nvd.nist.gov/vuln/detail/{cve}"],
            }
            for cve, cvss, verified, summary in vulns
        }
    fill = _MODULES.get(module)
    b["data"] = fill(b, host, rng, product, version) if fill else f"{product} {version}".strip() + "\n"
    b["hash"] = _signed32(b["data"])
    _extras(b, host, n)
    return b


def _extras(b: dict, host: Host, n: int) -> None:
    """Members few banners have (a scan id, a screenshot, security.txt, OS classes), chosen by hashing so
    that adding them drew nothing from the random stream: every other value stays as it was."""
    pick = int(_hex(host.ip, b["port"], n, "extras", n=8), 16)
    if pick % 50 == 0 and not host.visit:  # the demo scan ran once, on the first pass
        b["_intel"]["options"]["scan"] = DEMO_SCAN
    if b["port"] == 3389 and pick % 3 == 0:
        b["screenshot"] = {
            "mime": "image/webp",
            "labels": ["desktop", "login"] if pick % 2 else ["login"],
            "hash": _signed32(host.ip, "screenshot"),
        }
        b.setdefault("tags", []).append("screenshot")
    classes = OS_CLASSES.get(host.os or "")
    sure = int(_hex(host.ip, "os", n=8), 16)  # of the host: every banner of it says the same
    if classes and sure % 4 == 0:  # a host nmap -O fingerprinted
        best = 100 if sure % 3 else 96 - sure % 5
        b["os_classes"] = [
            {"vendor": v, "family": f, "generation": g, "type": t, "accuracy": best - 4 * i}
            for i, (v, f, g, t) in enumerate(classes)
        ]
    http = b.get("http")
    if http and pick % 7 == 0:
        http["securitytxt"] = f"Contact: mailto:security@{b['domains'][0]}\nPreferred-Languages: en\n"
        http["securitytxt_hash"] = _signed32(http["securitytxt"])
    if http and pick % 5 == 1:
        http["robots"] = ROBOTS
        http["robots_hash"] = _signed32(ROBOTS)


def _http(b: dict, host: Host, rng: random.Random, product: str, version: str, tls: bool = False) -> str:
    titles = HTTP_TITLES.get(product, ["Welcome", "Login", "Index of /"])
    if product == "Apache httpd":  # the default page names the distribution that ships it
        titles = [
            t.replace("Ubuntu", host.os or "") for t in titles if "Ubuntu" not in t or host.os in ("Ubuntu", "Debian")
        ]
    title = rng.choice(titles)
    status = rng.choices([200, 301, 302, 401, 403, 404], [60, 10, 8, 8, 6, 8])[0]
    server = f"{product.split()[0]}/{version}" if version else product
    html = f"<html><head><title>{title}</title></head><body><h1>{title}</h1></body></html>"
    components = dict(rng.sample(COMPONENTS, rng.choice([0, 1, 2, 3])))
    b["http"] = {
        "status": status,
        "title": title,
        "server": server,
        "host": host.hostnames[0] if host.hostnames else host.ip_str,
        "html": html,
        "html_hash": _signed32(html),
        "location": "/",
        "robots": None,
        "robots_hash": None,
        "sitemap": None,
        "sitemap_hash": None,
        "securitytxt": None,
        "securitytxt_hash": None,
        "redirects": [],
        "components": {name: {"categories": cats} for name, cats in components.items()},
        "favicon": {"hash": _signed32(product, "favicon")},
    }
    if rng.random() < 0.05:
        b["http"]["waf"] = rng.choice(["Cloudflare", "ModSecurity", "AWS WAF"])
    if tls:
        _tls(b, host, rng)
    return f"HTTP/1.1 {status} OK\r\nServer: {server}\r\nContent-Type: text/html\r\nContent-Length: {len(html)}\r\n\r\n"


def _https(b, host, rng, product, version) -> str:
    return _http(b, host, rng, product, version, tls=True)


def _tls(b: dict, host: Host, rng: random.Random) -> None:
    cn = host.hostnames[0] if host.hostnames else host.ip_str
    self_signed = rng.random() < 0.15
    issued = datetime.strptime(b["timestamp"][:10], "%Y-%m-%d") - timedelta(days=rng.randint(1, 400))
    expires = issued + timedelta(days=90 if not self_signed else 3650)
    expired = expires < datetime.strptime(b["timestamp"][:10], "%Y-%m-%d")
    issuer = (
        {"CN": cn}
        if self_signed
        else {"C": "US", "O": "Example Trust Services", "CN": rng.choice(["ETS R3", "ETS R10", "ETS E5"])}
    )
    fingerprint = _hex(cn, issued)
    b["ssl"] = {
        "cert": {
            "sig_alg": "sha256WithRSAEncryption",
            "issued": issued.strftime("%Y%m%d%H%M%SZ"),
            "expires": expires.strftime("%Y%m%d%H%M%SZ"),
            "expired": expired,
            "version": 2,
            "extensions": [],
            "fingerprint": {"sha256": fingerprint, "sha1": fingerprint[:40]},
            "serial": int(_hex(cn, "serial", n=16), 16),
            "subject": {"CN": cn},
            "issuer": issuer,
            "pubkey": {"type": "rsa", "bits": 2048},
        },
        "cipher": {"version": "TLSv1.3", "bits": 256, "name": "TLS_AES_256_GCM_SHA384"},
        "versions": rng.choice([["TLSv1.2", "TLSv1.3", "-TLSv1", "-SSLv3"], ["TLSv1", "TLSv1.1", "TLSv1.2", "-SSLv3"]]),
        "alpn": rng.choice([["h2", "http/1.1"], ["http/1.1"], []]),
        "jarm": _hex(b.get("product"), b.get("version"), "jarm", n=62),
        "ja3s": _hex(b.get("product"), "ja3s", n=32),
        "chain": [f"-----BEGIN CERTIFICATE-----\n{_hex(cn, 'pem')}\n-----END CERTIFICATE-----\n"],
        "chain_sha256": [fingerprint],
        "dhparams": None,
        "tlsext": [{"id": 16, "name": "application_layer_protocol_negotiation"}],
        "acceptable_cas": [],
        "trust": {"revoked": False, "browser": None},
        "ocsp": {},
    }
    tags = b.setdefault("tags", [])
    if self_signed:
        tags.append("self-signed")
    if expired:
        tags.append("expired")


def _ssh(b: dict, host: Host, rng: random.Random, product: str, version: str) -> str:
    key_type = rng.choice(["ssh-rsa", "ecdsa-sha2-nistp256", "ssh-ed25519"])
    fingerprint = ":".join(_hex(host.ip, key_type, n=32)[i : i + 2] for i in range(0, 32, 2))
    b["ssh"] = {
        "type": key_type,
        "fingerprint": fingerprint,
        "hassh": _hex(version, "hassh", n=32),
        "key": _hex(host.ip, "key", n=64),
        "cipher": "aes128-ctr",
        "mac": "hmac-sha2-256",
        "kex": {
            "kex_algorithms": ["curve25519-sha256", "diffie-hellman-group14-sha256"],
            "server_host_key_algorithms": [key_type],
            "encryption_algorithms": ["aes128-ctr", "aes256-gcm@openssh.com"],
            "mac_algorithms": ["hmac-sha2-256"],
            "compression_algorithms": ["none"],
        },
    }
    distro = {"Ubuntu": "Ubuntu-4ubuntu0.5", "Debian": "Debian-5"}.get(host.os or "", "")
    release = f"SSH-2.0-OpenSSH_{version}{' ' + distro if distro else ''}"
    return f"{release}\r\nKey type: {key_type}\r\nFingerprint: {fingerprint}\r\n"


def _imaps(b, host, rng, product, version) -> str:
    _tls(b, host, rng)
    return "* OK [CAPABILITY IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE AUTH=PLAIN] Dovecot ready.\r\n"


def _mongodb(b: dict, host: Host, rng: random.Random, product: str, version: str) -> str:
    dbs = rng.sample(["admin", "local", "config", "shop", "users", "analytics", "READ_ME_TO_RECOVER_YOUR_DATA"], 3)
    b["mongodb"] = {
        "authentication": rng.random() < 0.5,
        "databases": [{"name": d, "sizeOnDisk": rng.randint(1, 10**7)} for d in dbs],
    }
    return f'MongoDB Server Information\n{{"version": "{version}", "databases": {dbs}}}\n'


def _redis(b: dict, host: Host, rng: random.Random, product: str, version: str) -> str:
    keys = rng.sample(["session:1", "cache:home", "queue:jobs", "backup1", "backup2", "config"], 3)
    b["redis"] = {"keys": {"data": keys, "more": False}}
    kernel = "FreeBSD 13.2-RELEASE amd64" if host.os == "FreeBSD" else "Linux 5.15.0-91-generic x86_64"
    return f"# Server\r\nredis_version:{version}\r\nredis_mode:standalone\r\nos:{kernel}\r\n"


def _rsync(b: dict, host: Host, rng: random.Random, product: str, version: str) -> str:
    modules = rng.sample(["backup", "www", "pub", "data", "home"], 2)
    b["rsync"] = {"authentication": False, "modules": {m: "" for m in modules}}
    return "@RSYNCD: 31.0\n" + "".join(f"{m}\n" for m in modules)


def _smtp(b, host, rng, product, version) -> str:
    name = host.hostnames[0] if host.hostnames else host.ip_str
    return f"220 {name} ESMTP {product} {version}\r\n250-{name} Hello\r\n250-SIZE 52428800\r\n250 STARTTLS\r\n"


def _modbus(b, host, rng, product, version) -> str:
    b["modbus"] = {"unit_id": rng.randint(0, 5), "vendor": rng.choice(["Schneider Electric", "ABB", "Siemens"])}
    return f"Unit ID: {b['modbus']['unit_id']}\n  -- Device Identification: {b['modbus']['vendor']}\n"


def _ntp(b, host, rng, product, version) -> str:
    b["ntp"] = {"stratum": rng.randint(1, 4), "precision": -23, "version": 4}
    return f"NTP\n  stratum: {b['ntp']['stratum']}\n  version: 4\n"


def _dns(b, host, rng, product, version) -> str:
    b["dns"] = {"resolver_hostname": None, "recursive": rng.random() < 0.4, "software": f"dnsmasq-{version}"}
    return f"\nRecursion: {'enabled' if b['dns']['recursive'] else 'disabled'}\nSoftware: dnsmasq-{version}\n"


_MODULES = {
    "http": _http,
    "https": _https,
    "imap-ssl": _imaps,
    "ssh": _ssh,
    "mongodb": _mongodb,
    "redis": _redis,
    "rsync": _rsync,
    "smtp": _smtp,
    "modbus": _modbus,
    "ntp": _ntp,
    "dns-udp": _dns,
}
