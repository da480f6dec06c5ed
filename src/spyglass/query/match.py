"""A parsed query tested against one banner in memory (the live-tail pane's client-side filter).

It follows the index's reading of a banner (``server/banners/fields.py``): the same members for
each filter, text filters as word sequences (query/words.py), exact values case-insensitive,
hostnames and domains by suffix, CPEs by prefix. Banners are untyped: a member of an odd type simply does not match.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from spyglass.query.ast import Filter, Query, Text
from spyglass.query.filters import FILTERS, SEEN_FILTERS, Kind
from spyglass.query.words import split, words


def _padded(found: list[str]) -> str:
    """Words between single spaces, padded (`` a b c ``): words in sequence are a substring."""
    return " " + " ".join(found) + " "


def _obj(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _scalar(v: Any) -> str | None:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (str, int, float)):
        return str(v) if v != "" else None
    return None


def _texts(v: Any) -> list[str]:
    items = v if isinstance(v, list) else [v]
    return [t for t in map(_scalar, items) if t is not None]


def _names(v: Any) -> list[str]:
    return [k for k in v if k] if isinstance(v, dict) else _texts(v)


def _path(b: dict, *parts: str) -> Any:
    value: Any = b
    for part in parts:
        value = _obj(value).get(part)
    return value


def _address(b: dict) -> str | None:
    for name in ("ip_str", "ipv6"):
        if isinstance(b.get(name), str):
            return b[name]
    ip = b.get("ip")
    if isinstance(ip, int) and not isinstance(ip, bool) and 0 <= ip < 2**32:
        return str(ipaddress.ip_address(ip))
    return ip if isinstance(ip, str) else None


def _crawler(b: dict) -> dict:
    for name, value in b.items():
        if name.startswith("_") and isinstance(value, dict) and ("crawler" in value or "module" in value):
            return value
    return {}


def _ssl_words(b: dict) -> list[str]:
    cert = _obj(_path(b, "ssl", "cert"))
    return [t for part in ("subject", "issuer") for t in map(_scalar, _obj(cert.get(part)).values()) if t]


def _components(b: dict) -> list[str]:
    return _names(_path(b, "http", "components"))


def _categories(b: dict) -> list[str]:
    comps = _path(b, "http", "components")
    return [c for v in _obj(comps).values() for c in _texts(_obj(v).get("categories"))]


def _os_classes(b: dict, name: str) -> list[str]:
    classes = b.get("os_classes")
    return [t for c in classes if isinstance(c, dict) for t in _texts(c.get(name))] if isinstance(classes, list) else []


def _os_accuracy(b: dict) -> list[int]:
    """The most accurate OS class's accuracy (0 to 100)."""
    classes = b.get("os_classes")
    given = [c.get("accuracy") for c in classes if isinstance(c, dict)] if isinstance(classes, list) else []
    found: list[int] = [a for a in given if type(a) is int and 0 <= a <= 100]
    return [max(found)] if found else []


def free_text(b: dict) -> list[str]:
    """What free text matches: data, product, HTTP title, org, hostnames."""
    return (
        _texts(b.get("data"))
        + _texts(b.get("product"))
        + _texts(_path(b, "http", "title"))
        + (_texts(b.get("org")) + _texts(b.get("hostnames")))
    )


# filter name -> the banner's values it is tested against
VALUES: dict[str, Callable[[dict], list]] = {
    "all": lambda b: free_text(b) + _texts(b.get("isp")) + _ssl_words(b),
    "asn": lambda b: _texts(b.get("asn")),
    "city": lambda b: _texts(_path(b, "location", "city")),
    "country": lambda b: _texts(_path(b, "location", "country_code")),
    "cpe": lambda b: _texts(b.get("cpe23")) + _texts(b.get("cpe")),
    "domain": lambda b: _texts(b.get("domains")),
    "has_ipv6": lambda b: [":" in (_address(b) or "")],
    "has_screenshot": lambda b: ["screenshot" in b],
    "has_ssl": lambda b: [bool(b.get("ssl"))],
    "has_vuln": lambda b: [bool(b.get("vulns"))],
    "hash": lambda b: [b.get("hash")],
    "hostname": lambda b: _texts(b.get("hostnames")),
    "http.component": _components,
    "http.component_category": _categories,
    "http.favicon.hash": lambda b: [_path(b, "http", "favicon", "hash")],
    "http.html_hash": lambda b: [_path(b, "http", "html_hash")],
    "http.robots_hash": lambda b: [_path(b, "http", "robots_hash")],
    "http.securitytxt": lambda b: _texts(_path(b, "http", "securitytxt")),
    "http.status": lambda b: [_path(b, "http", "status")],
    "http.title": lambda b: _texts(_path(b, "http", "title")),
    "http.waf": lambda b: _texts(_path(b, "http", "waf")),
    "ip": lambda b: [_address(b)],
    "isp": lambda b: _texts(b.get("isp")),
    "net": lambda b: [_address(b)],
    "org": lambda b: _texts(b.get("org")),
    "os": lambda b: _texts(b.get("os")),
    "os.accuracy": _os_accuracy,
    "os.family": lambda b: _os_classes(b, "family"),
    "os.generation": lambda b: _os_classes(b, "generation"),
    "os.type": lambda b: _os_classes(b, "type"),
    "os.vendor": lambda b: _os_classes(b, "vendor"),
    "port": lambda b: [b.get("port")],
    "product": lambda b: _texts(b.get("product")),
    "region": lambda b: _texts(_path(b, "location", "region_code")),
    "scan": lambda b: _texts(_obj(_crawler(b).get("options")).get("scan")),
    "screenshot.label": lambda b: _texts(_path(b, "screenshot", "labels")),
    "ssh.fingerprint": lambda b: _texts(_path(b, "ssh", "fingerprint")),
    "ssh.hassh": lambda b: _texts(_path(b, "ssh", "hassh")),
    "ssh.type": lambda b: _texts(_path(b, "ssh", "type")),
    "ssl": _ssl_words,
    "ssl.alpn": lambda b: _texts(_path(b, "ssl", "alpn")),
    "ssl.cert.expired": lambda b: [_path(b, "ssl", "cert", "expired")],
    "ssl.cert.fingerprint": lambda b: _texts(_path(b, "ssl", "cert", "fingerprint", "sha256")),
    "ssl.cert.issuer.cn": lambda b: _texts(_path(b, "ssl", "cert", "issuer", "CN")),
    "ssl.cert.serial": lambda b: _texts(_path(b, "ssl", "cert", "serial")),
    "ssl.cert.subject.cn": lambda b: _texts(_path(b, "ssl", "cert", "subject", "CN")),
    "ssl.ja3s": lambda b: _texts(_path(b, "ssl", "ja3s")),
    "ssl.jarm": lambda b: _texts(_path(b, "ssl", "jarm")),
    "ssl.version": lambda b: _texts(_path(b, "ssl", "versions")),
    "state": lambda b: _texts(_path(b, "location", "region_code")),
    "tag": lambda b: _texts(b.get("tags")),
    "title": lambda b: _texts(_path(b, "http", "title")),
    "transport": lambda b: _texts(b.get("transport")),
    "version": lambda b: _texts(b.get("version")),
    "vuln": lambda b: _names(b.get("vulns")),
    "before": lambda b: [b.get("timestamp")],
    "after": lambda b: [b.get("timestamp")],
}


def _day(value: Any) -> date | None:
    if isinstance(value, str) and len(value) >= 10:
        try:
            return date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None


def _asn(text: str) -> str:
    text = text.upper()
    return text if text.startswith("AS") else "AS" + text


def _filter_matches(f: Filter, b: dict) -> bool:
    if f.name in SEEN_FILTERS:  # what a scan saw besides open services: never a banner
        return False
    kind = FILTERS[f.name]
    have = VALUES[f.name](b)
    if kind is Kind.TEXT:
        wanted = [_padded(found) for v in f.values if (found := words(str(v)))]
        padded = [_padded(split(h)) for h in have] if wanted else []
        return any(w in h for w in wanted for h in padded)
    if kind is Kind.EXACT:
        lowered = {str(h).lower() for h in have}
        return any(str(v).lower() in lowered for v in f.values)
    if kind is Kind.SUFFIX:
        names = [h.lower().rstrip(".") for h in have]
        return any(n == str(v) or n.endswith("." + str(v)) for v in f.values for n in names)
    if kind is Kind.PREFIX:
        cpes = [h.lower() for h in have]
        return any(c == str(v) or c.startswith(str(v) + ":") for v in f.values for c in cpes)
    if kind is Kind.COUNTRY:
        return any(h.upper() in f.values for h in have)
    if kind is Kind.ASN:
        return any(_asn(h) in f.values for h in have)
    if kind is Kind.INT:
        return any(type(h) is int and h in f.values for h in have)
    if kind is Kind.BOOL:
        return any(type(h) is bool and h in f.values for h in have)
    if kind is Kind.DATE:
        days = [d for d in map(_day, have) if d]
        bounds = [v for v in f.values if isinstance(v, date)]
        if not days or not bounds:
            return False
        if f.name == "before":
            return days[0] < min(bounds)
        return days[0] >= max(bounds) + timedelta(days=1)
    if kind is Kind.CIDR:
        for h in have:
            try:
                address = ipaddress.ip_address(h) if isinstance(h, str) else None
            except ValueError:
                address = None
            if address is not None and any(address in net for net in f.values):  # type: ignore[operator]
                return True
        return False
    return False


def _text_matches(t: Text, b: dict) -> bool:
    found = words(t.text)
    return bool(found) and any(_padded(found) in _padded(split(h)) for h in free_text(b))


def matcher(query: Query) -> Callable[[Any], bool]:
    """A test of ``query`` (parsed without errors) for a banner dict: every term must hold."""
    terms = list(query.terms)

    def matches(b: Any) -> bool:
        if not isinstance(b, dict):
            return False
        for term in terms:
            hit = _filter_matches(term, b) if isinstance(term, Filter) else _text_matches(term, b)
            if hit == term.negated:
                return False
        return True

    return matches
