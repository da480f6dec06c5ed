"""What the crawler speaks (``GET /intel/protocols``) and where it looks (``GET /intel/ports``)."""

from __future__ import annotations

PROTOCOLS: dict[str, str] = {
    "http": "HTTP: status, headers, title, server, HTML and its hash, robots.txt, security.txt, favicon hash, "
    "redirects on the same service.",
    "https": "HTTP over TLS: everything the http module records plus the certificate, its chain, the TLS "
    "versions the service accepts and refuses, the cipher and ALPN.",
    "ssh": "SSH: version string, key exchange, cipher, MAC and compression lists, HASSH, host key type, "
    "key and fingerprint.",
    "ftp": "FTP: greeting, whether anonymous login is allowed, and the FEAT feature list.",
    "smtp": "SMTP: greeting, EHLO extensions, and the certificate when STARTTLS is offered.",
    "redis": "Redis: the INFO sections (server version, mode, OS, clients, memory, keyspace).",
    "generic": "Records what a port says first, or how it answers an HTTP request, when no other module fits.",
}

# The crawler's default ports and the protocol it tries first on each (others follow from what the
# service says). Each port costs a connection per address, so the list stays short.
PORTS: dict[int, str] = {
    21: "ftp",
    22: "ssh",
    25: "smtp",
    80: "http",
    443: "https",
    587: "smtp",
    2121: "ftp",
    2222: "ssh",
    3000: "http",
    5000: "http",
    6379: "redis",
    8000: "http",
    8008: "http",
    8080: "http",
    8443: "https",
    8888: "http",
    9200: "http",
}
