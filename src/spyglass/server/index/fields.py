"""How a banner becomes an index document: the fields the filters and facets read.

Field prefixes say what a field is for: ``t_`` words (tokenized, for TEXT filters), ``x_``
lower-cased exact values (EXACT, SUFFIX and PREFIX filters), ``f_`` values as shown (facets),
``i_`` integers and ``b_`` booleans (both filters and facets).
"""

from __future__ import annotations

from typing import Any

import tantivy

# filter name -> field it is matched against (TEXT filters: tokenized fields)
FILTER_FIELDS: dict[str, str] = {
    "asn": "f_asn", "city": "t_city", "country": "f_country", "cpe": "x_cpe", "domain": "x_domain",
    "has_ipv6": "b_has_ipv6", "has_screenshot": "b_has_screenshot", "has_ssl": "b_has_ssl",
    "has_vuln": "b_has_vuln", "hash": "i_hash", "hostname": "x_hostname",
    "http.component": "x_http_component", "http.component_category": "x_http_component_category",
    "http.favicon.hash": "i_http_favicon_hash", "http.html_hash": "i_http_html_hash",
    "http.robots_hash": "i_http_robots_hash", "http.securitytxt": "t_http_securitytxt",
    "http.status": "i_http_status", "http.title": "t_http_title", "http.waf": "x_http_waf",
    "ip": "ip", "isp": "t_isp", "net": "ip", "org": "t_org", "os": "t_os", "port": "i_port",
    "product": "t_product", "region": "x_region", "scan": "x_scan", "screenshot.label": "x_screenshot_label",
    "ssh.fingerprint": "x_ssh_fingerprint", "ssl": "t_ssl", "ssl.alpn": "x_ssl_alpn",
    "ssl.cert.fingerprint": "x_ssl_cert_fingerprint", "ssl.cert.issuer.cn": "t_ssl_cert_issuer_cn",
    "ssl.cert.serial": "x_ssl_cert_serial", "ssl.cert.subject.cn": "t_ssl_cert_subject_cn",
    "ssl.ja3s": "x_ssl_ja3s", "ssl.jarm": "x_ssl_jarm", "ssl.version": "x_ssl_version",
    "state": "x_region", "tag": "x_tag", "title": "t_http_title", "transport": "x_transport",
    "version": "x_version", "vuln": "x_vuln", "before": "timestamp", "after": "timestamp",
    "all": "data",
}
ALL_TEXT_FIELDS = ("data", "t_http_title", "t_org", "t_isp", "t_product", "t_ssl")

# facet name -> field whose values are counted
FACET_FIELDS: dict[str, str] = {
    "asn": "f_asn", "city": "f_city", "country": "f_country", "domain": "f_domain",
    "has_screenshot": "b_has_screenshot", "hash": "i_hash", "http.component": "f_http_component",
    "http.component_category": "f_http_component_category", "http.favicon.hash": "i_http_favicon_hash",
    "http.html_hash": "i_http_html_hash", "http.robots_hash": "i_http_robots_hash",
    "http.status": "i_http_status", "http.title": "f_http_title", "http.waf": "f_http_waf", "ip": "f_ip",
    "isp": "f_isp", "mongodb.database.name": "f_mongodb_database_name", "org": "f_org", "os": "f_os",
    "port": "i_port", "product": "f_product", "redis.key": "f_redis_key", "region": "f_region",
    "rsync.module": "f_rsync_module", "screenshot.label": "f_screenshot_label",
    "ssh.fingerprint": "f_ssh_fingerprint", "ssl.alpn": "f_ssl_alpn", "ssl.cert.fingerprint": "f_ssl_cert_fingerprint",
    "ssl.cert.issuer.cn": "f_ssl_cert_issuer_cn", "ssl.cert.serial": "f_ssl_cert_serial",
    "ssl.cert.subject.cn": "f_ssl_cert_subject_cn", "ssl.ja3s": "f_ssl_ja3s", "ssl.jarm": "f_ssl_jarm",
    "ssl.version": "f_ssl_version", "state": "f_region", "tag": "f_tag", "transport": "f_transport",
    "version": "f_version", "vuln": "f_vuln", "vuln.verified": "f_vuln_verified",
}


def build_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("i_rowid", indexed=True, fast=True)
    sb.add_date_field("timestamp", indexed=True, fast=True)
    sb.add_ip_addr_field("ip", indexed=True, fast=True)
    sb.add_text_field("data", index_option="position")
    names = set(FILTER_FIELDS.values()) | set(FACET_FIELDS.values())
    for name in sorted(names):
        if name.startswith("t_"):
            sb.add_text_field(name, index_option="position")
        elif name.startswith("x_"):
            sb.add_text_field(name, tokenizer_name="raw", index_option="basic")
        elif name.startswith("f_"):
            sb.add_text_field(name, tokenizer_name="raw", fast=True, index_option="basic")
        elif name.startswith("i_"):
            sb.add_integer_field(name, indexed=True, fast=True)
        elif name.startswith("b_"):
            sb.add_boolean_field(name, indexed=True, fast=True)
    return sb.build()


def _suffixes(name: str) -> list[str]:
    parts = name.lower().rstrip(".").split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


def _prefixes(cpe: str) -> list[str]:
    parts = cpe.lower().split(":")
    return [":".join(parts[:i]) for i in range(3, len(parts) + 1)]


def _add_exact(doc: dict, name: str, values: list) -> None:
    shown = [str(v) for v in values]
    doc["f_" + name] = shown
    doc["x_" + name] = [v.lower() for v in shown]


def document(b: dict, rowid: int) -> dict:
    """The index document of banner ``b`` (already normalized: ``_intel`` member, ip_str).

    On the import's hot path: plain lookups, nothing computed that a banner does not have.
    """
    ip_str = b["ip_str"]
    transport = b.get("transport") or "tcp"
    ssl = b.get("ssl")
    vulns = b.get("vulns")
    doc: dict[str, Any] = {
        "i_rowid": rowid, "timestamp": b["timestamp"][:26] + "Z", "ip": ip_str, "data": b.get("data") or "",
        "i_port": b["port"], "f_ip": ip_str, "f_transport": transport, "x_transport": transport.lower(),
        "b_has_ipv6": ":" in ip_str, "b_has_ssl": bool(ssl), "b_has_vuln": bool(vulns),
        "b_has_screenshot": "screenshot" in b,
    }
    loc = b.get("location")
    if loc:
        if loc.get("country_code"):
            doc["f_country"] = loc["country_code"].upper()
        if loc.get("city"):
            doc["f_city"] = doc["t_city"] = loc["city"]
        if loc.get("region_code"):
            _add_exact(doc, "region", [loc["region_code"]])
    if b.get("asn"):
        doc["f_asn"] = b["asn"].upper()
    for name in ("org", "isp", "os", "product"):
        value = b.get(name)
        if value:
            doc["f_" + name] = doc["t_" + name] = str(value)
    if b.get("version") is not None:
        _add_exact(doc, "version", [b["version"]])
    if b.get("tags"):
        _add_exact(doc, "tag", b["tags"])
    if vulns:
        _add_exact(doc, "vuln", list(vulns))
        doc["f_vuln_verified"] = [cve for cve, v in vulns.items() if isinstance(v, dict) and v.get("verified")]
    if isinstance(b.get("hash"), int):
        doc["i_hash"] = b["hash"]
    if b.get("hostnames"):
        doc["x_hostname"] = sorted({s for h in b["hostnames"] for s in _suffixes(h)})
    if b.get("domains"):
        doc["x_domain"] = sorted({s for d in b["domains"] for s in _suffixes(d)})
        doc["f_domain"] = b["domains"]
    cpes = (b.get("cpe23") or []) + (b.get("cpe") or [])
    if cpes:
        doc["x_cpe"] = sorted({p for c in cpes for p in _prefixes(c)})
    http = b.get("http")
    if http:
        _http_fields(doc, http)
    if ssl:
        _ssl_fields(doc, ssl)
    ssh = b.get("ssh")
    if ssh and ssh.get("fingerprint"):
        _add_exact(doc, "ssh_fingerprint", [ssh["fingerprint"]])
    meta = b.get("_intel")
    if meta and (meta.get("options") or {}).get("scan"):
        doc["x_scan"] = str(meta["options"]["scan"]).lower()
    if "screenshot" in b and (b["screenshot"] or {}).get("labels"):
        _add_exact(doc, "screenshot_label", b["screenshot"]["labels"])
    _module_fields(doc, b)
    return doc


def _http_fields(doc: dict, http: dict) -> None:
    if http.get("title"):
        doc["f_http_title"] = doc["t_http_title"] = http["title"]
    if http.get("securitytxt"):
        doc["t_http_securitytxt"] = http["securitytxt"]
    for name in ("status", "html_hash", "robots_hash"):
        value = http.get(name)
        if isinstance(value, int):
            doc["i_http_" + name] = value
    favicon = http.get("favicon")
    if isinstance(favicon, dict) and isinstance(favicon.get("hash"), int):
        doc["i_http_favicon_hash"] = favicon["hash"]
    components = http.get("components")
    if components:
        _add_exact(doc, "http_component", list(components))
        categories = sorted({c for v in components.values() for c in (v or {}).get("categories", [])})
        if categories:
            _add_exact(doc, "http_component_category", categories)
    if http.get("waf"):
        _add_exact(doc, "http_waf", [http["waf"]])


def _ssl_fields(doc: dict, ssl: dict) -> None:
    cert = ssl.get("cert") or {}
    subject, issuer = cert.get("subject") or {}, cert.get("issuer") or {}
    doc["t_ssl"] = " ".join(str(v) for v in (*subject.values(), *issuer.values()) if v)
    if subject.get("CN"):
        doc["f_ssl_cert_subject_cn"] = doc["t_ssl_cert_subject_cn"] = str(subject["CN"])
    if issuer.get("CN"):
        doc["f_ssl_cert_issuer_cn"] = doc["t_ssl_cert_issuer_cn"] = str(issuer["CN"])
    fingerprint = (cert.get("fingerprint") or {}).get("sha256")
    if fingerprint:
        _add_exact(doc, "ssl_cert_fingerprint", [fingerprint])
    if cert.get("serial") is not None:
        _add_exact(doc, "ssl_cert_serial", [cert["serial"]])
    for name in ("versions", "alpn"):
        if ssl.get(name):
            _add_exact(doc, "ssl_" + name.rstrip("s"), ssl[name])
    for name in ("jarm", "ja3s"):
        if ssl.get(name):
            _add_exact(doc, "ssl_" + name, [ssl[name]])


def _module_fields(doc: dict, b: dict) -> None:
    mongodb = b.get("mongodb")
    if isinstance(mongodb, dict):
        names = [d["name"] for d in mongodb.get("databases") or [] if isinstance(d, dict) and d.get("name")]
        if names:
            doc["f_mongodb_database_name"] = names
    redis = b.get("redis")
    if isinstance(redis, dict) and isinstance(redis.get("keys"), dict) and redis["keys"].get("data"):
        doc["f_redis_key"] = [str(k) for k in redis["keys"]["data"]]
    rsync = b.get("rsync")
    if isinstance(rsync, dict) and isinstance(rsync.get("modules"), dict) and rsync["modules"]:
        doc["f_rsync_module"] = list(rsync["modules"])
