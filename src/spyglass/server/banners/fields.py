"""How a banner becomes a store's document: the fields the filters and facets read.

Banners are untyped JSON: every member but the address, port, transport and timestamp (read by
``shape.py``) may hold any JSON type. :func:`document` reads each one defensively and puts only
well-typed values in the document (text as strings, integers only within i64, booleans as
booleans): an odd type is indexed as text or skipped for that field, so no banner can make a
store refuse a document (which would block every later import from the record store).

``text`` is what free text matches: the raw ``data``, then the product, HTTP title, org and
hostnames, in one field so that a word costs one term lookup.

Field prefixes say what a field is for: ``t_`` words (tokenized, for TEXT filters), ``x_``
lower-cased exact values (EXACT, SUFFIX and PREFIX filters), ``f_`` values as shown (facets),
``i_`` integers and ``b_`` booleans (both filters and facets). Every store holds these fields: the
embedded index (``index/schema.py``, which merges some) and the ClickHouse store's columns.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from spyglass.server.banners.shape import Shape

I64 = (-(2**63), 2**63 - 1)
MAX_TERM = 1000  # characters kept of an exact or facet value (tantivy refuses terms over 64 KB)

# filter name -> field it is matched against (TEXT filters: tokenized fields)
FILTER_FIELDS: dict[str, str] = {
    "asn": "f_asn",
    "city": "t_city",
    "country": "f_country",
    "cpe": "x_cpe",
    "domain": "x_domain",
    "has_ipv6": "b_has_ipv6",
    "has_screenshot": "b_has_screenshot",
    "has_ssl": "b_has_ssl",
    "has_vuln": "b_has_vuln",
    "hash": "i_hash",
    "hostname": "x_hostname",
    "http.component": "x_http_component",
    "http.component_category": "x_http_component_category",
    "http.favicon.hash": "i_http_favicon_hash",
    "http.html_hash": "i_http_html_hash",
    "http.robots_hash": "i_http_robots_hash",
    "http.securitytxt": "t_http_securitytxt",
    "http.status": "i_http_status",
    "http.title": "t_http_title",
    "http.waf": "x_http_waf",
    "ip": "ip",
    "isp": "t_isp",
    "net": "ip",
    "org": "t_org",
    "os": "t_os",
    "os.accuracy": "i_os_accuracy",
    "os.family": "x_os_family",
    "os.generation": "x_os_generation",
    "os.type": "x_os_type",
    "os.vendor": "x_os_vendor",
    "port": "i_port",
    "product": "t_product",
    "region": "x_region",
    "scan": "x_scan",
    "screenshot.label": "x_screenshot_label",
    "ssh.fingerprint": "x_ssh_fingerprint",
    "ssl": "t_ssl",
    "ssl.alpn": "x_ssl_alpn",
    "ssl.cert.fingerprint": "x_ssl_cert_fingerprint",
    "ssl.cert.issuer.cn": "t_ssl_cert_issuer_cn",
    "ssl.cert.serial": "x_ssl_cert_serial",
    "ssl.cert.subject.cn": "t_ssl_cert_subject_cn",
    "ssl.ja3s": "x_ssl_ja3s",
    "ssl.jarm": "x_ssl_jarm",
    "ssl.version": "x_ssl_version",
    "state": "x_region",
    "tag": "x_tag",
    "title": "t_http_title",
    "transport": "x_transport",
    "version": "x_version",
    "vuln": "x_vuln",
    "before": "timestamp",
    "after": "timestamp",
    "all": "text",
    "ssh.type": "x_ssh_type",
    "ssh.hassh": "x_ssh_hassh",
    "ssl.cert.expired": "b_ssl_cert_expired",
}
ALL_TEXT_FIELDS = ("text", "t_isp", "t_ssl")  # text holds data, product, title, org, hostnames

# facet name -> field whose values are counted
FACET_FIELDS: dict[str, str] = {
    "asn": "f_asn",
    "city": "f_city",
    "country": "f_country",
    "domain": "f_domain",
    "has_screenshot": "b_has_screenshot",
    "hash": "i_hash",
    "http.component": "f_http_component",
    "http.component_category": "f_http_component_category",
    "http.favicon.hash": "i_http_favicon_hash",
    "http.html_hash": "i_http_html_hash",
    "http.robots_hash": "i_http_robots_hash",
    "http.status": "i_http_status",
    "http.title": "f_http_title",
    "http.waf": "f_http_waf",
    "ip": "f_ip",
    "isp": "f_isp",
    "mongodb.database.name": "f_mongodb_database_name",
    "org": "f_org",
    "os": "f_os",
    "os.accuracy": "i_os_accuracy",
    "os.family": "f_os_family",
    "os.generation": "f_os_generation",
    "os.type": "f_os_type",
    "os.vendor": "f_os_vendor",
    "port": "i_port",
    "product": "f_product",
    "redis.key": "f_redis_key",
    "region": "f_region",
    "rsync.module": "f_rsync_module",
    "screenshot.label": "f_screenshot_label",
    "ssh.fingerprint": "f_ssh_fingerprint",
    "ssl.alpn": "f_ssl_alpn",
    "ssl.cert.fingerprint": "f_ssl_cert_fingerprint",
    "ssl.cert.issuer.cn": "f_ssl_cert_issuer_cn",
    "ssl.cert.serial": "f_ssl_cert_serial",
    "ssl.cert.subject.cn": "f_ssl_cert_subject_cn",
    "ssl.ja3s": "f_ssl_ja3s",
    "ssl.jarm": "f_ssl_jarm",
    "ssl.version": "f_ssl_version",
    "state": "f_region",
    "tag": "f_tag",
    "transport": "f_transport",
    "version": "f_version",
    "vuln": "f_vuln",
    "vuln.verified": "f_vuln_verified",
    "ssh.type": "f_ssh_type",
    "ssh.hassh": "f_ssh_hassh",
    "ssl.cert.expired": "b_ssl_cert_expired",
}


def _text(v: Any) -> str | None:
    """A scalar as text (numbers too); None for null, lists and objects."""
    if v.__class__ is str:  # the common case first: this runs ~20 times a banner
        return v or None
    if v is None:
        return None
    if isinstance(v, str):
        return v or None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return None


def _texts(v: Any) -> list[str]:
    """Text of a scalar or of each scalar in a list."""
    if v.__class__ is str:
        return [v] if v else []
    if v is None:
        return []
    if v.__class__ is list:
        return [t for t in map(_text, v) if t is not None]
    t = _text(v)
    return [t] if t is not None else []


def _i64(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, str) and v.isascii() and v.lstrip("-").isdigit() and len(v) < 21:
        v = int(v)
    if isinstance(v, int) and I64[0] <= v <= I64[1]:
        return v
    return None


def _obj(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _names(v: Any) -> list[str]:
    """Names held as an object's keys or a list's strings (vulns, components)."""
    return [k for k in v if k] if isinstance(v, dict) else _texts(v)


MEMO = 4096  # lists of names whose terms are kept (a host's names recur in each of its banners)


def memo(terms: Callable[[list[str]], list[str]]) -> Callable[[list[str]], list[str]]:
    """``terms`` of a list of names, kept for the next banner with the same names: the last MEMO
    lists (a document's lists are read, never changed, so one list may serve several)."""
    kept: dict[tuple[str, ...], list[str]] = {}

    @functools.wraps(terms)
    def memoized(names: list[str]) -> list[str]:
        key = tuple(names)
        found = kept.get(key)
        if found is None:
            if len(kept) >= MEMO:
                kept.clear()
            found = kept[key] = terms(names)
        return found

    return memoized


@memo
def _suffixes(names: list[str]) -> list[str]:
    """Each name and every domain it is under (``a.b.c``: ``a.b.c``, ``b.c``, ``c``)."""
    out = set()
    for name in names:
        name = name.lower().rstrip(".")[:MAX_TERM]
        out.add(name)
        at = name.find(".")
        while at >= 0:
            out.add(name[at + 1 :])
            at = name.find(".", at + 1)
    return list(out)


@memo
def _prefixes(cpes: list[str]) -> list[str]:
    """Each CPE and its leading parts from the third on (``cpe:2.3:a``, ``cpe:2.3:a:nginx``...)."""
    out: set[str] = set()
    for cpe in cpes:
        cpe = cpe.lower()[:MAX_TERM]
        at = cpe.find(":", cpe.find(":") + 1)  # the second colon: a prefix ends at a later one
        if at < 0:
            continue
        at = cpe.find(":", at + 1)
        while at >= 0:
            out.add(cpe[:at])
            at = cpe.find(":", at + 1)
        out.add(cpe)
    return list(out)


Exact = Callable[[dict, str, list[str]], None]  # puts the values of one of EXACT_NAMES in a document


def split_exact(doc: dict, name: str, values: list[str]) -> None:
    """As the filter (``x_``, lower-cased) and the facet (``f_``, as shown) read them."""
    if values:
        shown = [v if len(v) <= MAX_TERM else v[:MAX_TERM] for v in values]
        doc["f_" + name] = shown
        doc["x_" + name] = [v.lower() for v in shown]


_NAMED = [(n, "t_" + n, "f_" + n, n in ("org", "product")) for n in ("org", "isp", "os", "product")]


def document(b: dict, shape: Shape, exact: Exact = split_exact, cpe: Callable = _prefixes) -> dict:
    """The index document of banner ``b`` whose required members ``shape`` holds (no rowid and
    current flag: the writer adds those); ``exact`` puts the values of EXACT_NAMES in it, ``cpe``
    makes the terms of its CPEs.

    On the import's hot path: plain lookups, nothing computed that a banner does not have.
    """
    ip_str = shape.ip_str
    ssl = b.get("ssl")
    vulns = b.get("vulns")
    doc: dict[str, Any] = {
        "timestamp": shape.stamp,
        "ip": ip_str,
        "i_port": shape.port,
        "f_ip": ip_str,
        "b_has_ipv6": ":" in ip_str,
        "b_has_ssl": bool(ssl),
        "b_has_vuln": bool(vulns),
        "b_has_screenshot": "screenshot" in b,
    }
    exact(doc, "transport", [shape.transport])
    text = [_text(b.get("data"))]
    loc = b.get("location")
    if isinstance(loc, dict) and loc:
        _location_fields(doc, loc, exact)
    asn = _text(b.get("asn"))
    if asn:
        asn = asn.upper()
        doc["f_asn"] = (asn if asn.startswith("AS") else "AS" + asn)[:MAX_TERM]
    for name, t_name, f_name, in_text in _NAMED:
        value = b.get(name)
        if value.__class__ is not str:
            value = _text(value)
        if value:
            doc[t_name] = value
            doc[f_name] = value[:MAX_TERM]
            if in_text:
                text.append(value)
    for member, name in (("version", "version"), ("tags", "tag")):
        value = b.get(member)
        if value is not None:
            exact(doc, name, _texts(value))
    if vulns:
        exact(doc, "vuln", _names(vulns))
        if isinstance(vulns, dict):
            doc["f_vuln_verified"] = [
                c[:MAX_TERM] for c, v in vulns.items() if isinstance(v, dict) and v.get("verified")
            ]
    hash_ = _i64(b.get("hash"))
    if hash_ is not None:
        doc["i_hash"] = hash_
    _name_fields(doc, b, text, cpe)
    http = b.get("http")
    if isinstance(http, dict):
        _http_fields(doc, http, text, exact)
    if isinstance(ssl, dict):
        _ssl_fields(doc, ssl, exact)
    ssh = b.get("ssh")
    if isinstance(ssh, dict):
        for name in ("fingerprint", "type", "hassh"):
            exact(doc, "ssh_" + name, _texts(ssh.get(name)))
    scan = _text(_obj(_obj(b.get(shape.crawler)).get("options")).get("scan")) if shape.crawler else None
    if scan:
        doc["x_scan"] = scan.lower()[:MAX_TERM]
    if "screenshot" in b:
        exact(doc, "screenshot_label", _texts(_obj(b["screenshot"]).get("labels")))
    if "mongodb" in b or "redis" in b or "rsync" in b:
        _module_fields(doc, b)
    if "os_classes" in b:
        _os_fields(doc, b["os_classes"], exact)
    doc["text"] = "\n".join(t for t in text if t)
    return doc


def _location_fields(doc: dict, loc: dict, exact: Exact) -> None:
    country = _text(loc.get("country_code"))
    if country:
        doc["f_country"] = country.upper()[:MAX_TERM]
    city = _text(loc.get("city"))
    if city:
        doc["t_city"] = city
        doc["f_city"] = city[:MAX_TERM]
    region = loc.get("region_code")
    if region is not None:
        exact(doc, "region", _texts(region))


def _name_fields(doc: dict, b: dict, text: list, cpe: Callable) -> None:
    """Hostnames and domains (each with the domains it is under) and CPEs (``cpe`` makes their terms)."""
    hostnames = _texts(b.get("hostnames"))
    if hostnames:
        doc["x_hostname"] = _suffixes(hostnames)
        text.extend(hostnames)
    domains = _texts(b.get("domains"))
    if domains:
        doc["x_domain"] = _suffixes(domains)
        doc["f_domain"] = [d[:MAX_TERM] for d in domains]
    cpes = _texts(b.get("cpe23")) + _texts(b.get("cpe"))
    if cpes:
        doc["x_cpe"] = cpe(cpes)


def _http_fields(doc: dict, http: dict, text: list, exact: Exact) -> None:
    title = _text(http.get("title"))
    if title:
        doc["t_http_title"] = title
        doc["f_http_title"] = title[:MAX_TERM]
        text.append(title)
    securitytxt = _text(http.get("securitytxt"))
    if securitytxt:
        doc["t_http_securitytxt"] = securitytxt
    for name in ("status", "html_hash", "robots_hash"):
        value = _i64(http.get(name))
        if value is not None:
            doc["i_http_" + name] = value
    favicon_hash = _i64(_obj(http.get("favicon")).get("hash"))
    if favicon_hash is not None:
        doc["i_http_favicon_hash"] = favicon_hash
    components = http.get("components")
    if components:
        exact(doc, "http_component", _names(components))
        if isinstance(components, dict):
            categories = sorted({c for v in components.values() for c in _texts(_obj(v).get("categories"))})
            exact(doc, "http_component_category", categories)
    waf = http.get("waf")
    if waf is not None:
        exact(doc, "http_waf", _texts(waf))


def _ssl_fields(doc: dict, ssl: dict, exact: Exact) -> None:
    cert = _obj(ssl.get("cert"))
    subject, issuer = _obj(cert.get("subject")), _obj(cert.get("issuer"))
    words = [t for t in map(_text, (*subject.values(), *issuer.values())) if t]
    if words:
        doc["t_ssl"] = " ".join(words)
    for name, part in (("subject", subject), ("issuer", issuer)):
        cn = _text(part.get("CN"))
        if cn:
            doc[f"t_ssl_cert_{name}_cn"] = cn
            doc[f"f_ssl_cert_{name}_cn"] = cn[:MAX_TERM]
    exact(doc, "ssl_cert_fingerprint", _texts(_obj(cert.get("fingerprint")).get("sha256")))
    exact(doc, "ssl_cert_serial", _texts(cert.get("serial")))
    if isinstance(cert.get("expired"), bool):
        doc["b_ssl_cert_expired"] = cert["expired"]
    exact(doc, "ssl_version", _texts(ssl.get("versions")))
    for name in ("alpn", "jarm", "ja3s"):
        exact(doc, "ssl_" + name, _texts(ssl.get(name)))


OS_CLASS = ("vendor", "family", "generation", "type")  # an OS class's members that are exact filters


def os_accuracy(classes: list) -> int | None:
    """The accuracy of the most accurate OS class (an integer from 0 to 100), None if none says one."""
    found = [a for c in classes if c.__class__ is dict and (a := c.get("accuracy")).__class__ is int and 0 <= a <= 100]
    return max(found) if found else None


def _os_fields(doc: dict, classes: Any, exact: Exact) -> None:
    """``os_classes`` (nmap -O's, formats/nmap_scripts.py): each member of every class as an exact
    value, and the best class's accuracy."""
    if classes.__class__ is not list:
        return
    for name in OS_CLASS:
        values = [t for c in classes if c.__class__ is dict for t in _texts(c.get(name))]
        exact(doc, "os_" + name, list(dict.fromkeys(values)))
    accuracy = os_accuracy(classes)
    if accuracy is not None:
        doc["i_os_accuracy"] = accuracy


def _module_fields(doc: dict, b: dict) -> None:
    databases = _obj(b.get("mongodb")).get("databases")
    if isinstance(databases, list):
        names = [n[:MAX_TERM] for n in (_text(_obj(d).get("name")) for d in databases) if n]
        if names:
            doc["f_mongodb_database_name"] = names
    keys = _obj(_obj(b.get("redis")).get("keys")).get("data")
    if isinstance(keys, list) and keys:
        doc["f_redis_key"] = [k[:MAX_TERM] for k in _texts(keys)]
    modules = _obj(b.get("rsync")).get("modules")
    if isinstance(modules, dict) and modules:
        doc["f_rsync_module"] = [m[:MAX_TERM] for m in modules if m]
