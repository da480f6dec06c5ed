"""One service (one banner) as inert text: its sections (TLS, HTTP, SSH, DNS, SNMP, NTP,
findings), vulnerabilities by CVSS, the raw banner, one line for a list, what changed between two
scans of it, and its raw text for the clipboard. A section appears only when it has a value."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from spyglass.present.values import (
    MAX_ITEMS,
    as_dict,
    block,
    empty,
    first_line,
    get_path,
    head,
    number,
    pad,
    plain,
    text_of,
)
from spyglass.safetext import ClipboardText, clean, fit, for_clipboard

MAX_MEMBERS = 40  # rows of a section read from a free-form member (dns, snmp, opts, ssh.kex)
MAX_VULNS = 200


@dataclass(frozen=True)
class Fact:
    label: str
    value: str
    tone: str = ""  # "strong", "bad" or "warn": how a screen may stress it; the text says it in words


@dataclass(frozen=True)
class Section:
    title: str  # "" for the opening block of a service
    facts: list[Fact]


@dataclass(frozen=True)
class Vuln:
    cve: str
    cvss: str
    score: float | None  # None when the CVSS is missing or not a number ("high")
    verified: str
    summary: str


@dataclass(frozen=True)
class ServiceText:
    title: str  # "443/tcp"
    sections: list[Section] = field(default_factory=list)
    vulns: list[Vuln] = field(default_factory=list)
    raw: str = ""


class _Facts(list):
    """Facts of one section; ``add`` cleans every value and skips empty ones, so no row (and no
    section) is ever blank."""

    def add(self, label: str, value: Any, tone: str = "") -> None:
        text = text_of(value)  # idempotent on text built here from cleaned parts
        if text:
            self.append(Fact(label, text, tone))


# -- small readers -----------------------------------------------------------------------------------
def humanise(name: Any) -> str:
    return clean(str(name).replace("_", " "), one_line=True, max_chars=40)


def service_key(banner: Mapping) -> str:
    return clean(
        f"{plain(banner.get('port', '?'))}/{plain(banner.get('transport') or 'tcp')}", one_line=True, max_chars=40
    )


def module_of(banner: Mapping) -> str:
    """The crawler module (``_intel.module``, ``_shodan.module``, whatever the namespace)."""
    metas = (v for k, v in banner.items() if str(k).startswith("_") and isinstance(v, Mapping))
    return next((text_of(m["module"]) for m in metas if not empty(m.get("module"))), "")


def product_line(banner: Mapping) -> str:
    """Product and version as one label, e.g. ``nginx 1.24.0`` (may be empty)."""
    return " ".join(t for t in (text_of(banner.get("product")), text_of(banner.get("version"))) if t)


def headline(banner: Mapping) -> str:
    """What a list shows for a service: its HTTP title, else the raw banner's first line (no ␍)."""
    return text_of(get_path(banner, "http.title"), max_chars=200) or first_line(banner.get("data"))


def seen(value: Any) -> str:
    return text_of(value)[:19].replace("T", " ")


PRODUCT_WIDTH = 32  # cells of a list line's product column (a longer product pushes the rest)


def service_line(banner: Any, product_width: int = PRODUCT_WIDTH) -> str:
    """One line for a service in a list: ``443/tcp  nginx 1.24.0  Welcome``. A ``product_width``
    below the usual cuts the product to it (with "…"), leaving the headline more room."""
    b = as_dict(banner)
    what = product_line(b) or module_of(b)
    if product_width < PRODUCT_WIDTH:
        what = fit(what, product_width)
    return clean(f"{pad(service_key(b), 9)} {pad(what, product_width)} {headline(b)}", one_line=True, max_chars=150)


def cert_date(value: Any) -> str:
    if isinstance(value, str):
        try:
            return datetime.strptime(value, "%Y%m%d%H%M%SZ").strftime("%Y-%m-%d")
        except ValueError:
            pass
    return text_of(value, max_chars=40) or "?"


def _members(facts: _Facts, value: Any, name: str) -> None:
    """Every member of a free-form object as a row (or the value itself when it is not an object)."""
    if isinstance(value, Mapping):
        for key, member in head(value, MAX_MEMBERS):
            facts.add(humanise(key), member)
    else:
        facts.add(name, value)


def os_classes(value: Any) -> list[str]:
    """nmap -O's OS classes in words, most accurate first: ``Linux 5.X (general purpose) 100%``."""
    out = []
    for c in value[:MAX_ITEMS] if isinstance(value, list) else []:
        if isinstance(c, Mapping):
            names = (text_of(c.get(k), max_chars=60) for k in ("vendor", "family", "generation"))
            kind, accuracy = text_of(c.get("type"), max_chars=40), c.get("accuracy")
            words = [" ".join(dict.fromkeys(n for n in names if n)), f"({kind})" if kind else ""]
            if any(words):  # (an accuracy alone names no OS)
                words.append(f"{accuracy}%" if type(accuracy) is int else "")
                out.append(" ".join(w for w in words if w))
    return out


# -- sections ----------------------------------------------------------------------------------------
def _general(b: Mapping) -> list[Fact]:
    facts = _Facts()
    facts.add("service", " ".join(t for t in (service_key(b), module_of(b)) if t))
    facts.add("product", product_line(b))
    facts.add("info", b.get("info"))
    facts.add("os", b.get("os"))
    facts.add("os classes", os_classes(b.get("os_classes")))
    facts.add("cpe", b.get("cpe23") or b.get("cpe"))
    facts.add("tags", b.get("tags"))
    facts.add("seen", seen(b.get("timestamp")))
    cloud = b.get("cloud")
    if isinstance(cloud, Mapping):
        where = (text_of(cloud.get(k)) for k in ("provider", "service", "region"))
        facts.add("cloud", ", ".join(t for t in where if t))
    else:
        facts.add("cloud", cloud)
    return facts


def _components(value: Any) -> str:
    if isinstance(value, Mapping):
        parts = []
        for name, about in head(value, MAX_MEMBERS):
            categories = text_of(about.get("categories")) if isinstance(about, Mapping) else text_of(about)
            parts.append(f"{name} ({categories})" if categories else str(name))
        return text_of(parts)
    if isinstance(value, list):
        return text_of([c.get("name", c) if isinstance(c, Mapping) else c for c in value])
    return text_of(value)


def _redirects(value: Any) -> str:
    if not isinstance(value, list):
        return text_of(value)
    hops = [
        text_of(r.get("location") or r.get("host")) if isinstance(r, Mapping) else text_of(r)
        for r in value[:MAX_MEMBERS]
    ]
    hops = [h for h in hops if h]
    return f"{len(value)}" + (f": {' → '.join(hops)}" if hops else "") if value else ""


def _excerpt(html: Any, chars: int = 160) -> str:
    if not isinstance(html, str):
        return text_of(html, max_chars=chars)
    return clean(" ".join(html[: chars * 4].split()), one_line=True, max_chars=chars)


def _http(h: Any) -> list[Fact]:
    facts = _Facts()
    if not isinstance(h, Mapping):
        facts.add("http", h)
        return facts
    facts.add("status", h.get("status"))
    facts.add("title", h.get("title"))
    facts.add("server", h.get("server"))
    facts.add("host", h.get("host"))
    facts.add("location", h.get("location"))
    facts.add("redirects", _redirects(h.get("redirects")))
    favicon = h.get("favicon")
    facts.add("favicon hash", favicon.get("hash") if isinstance(favicon, Mapping) else favicon)
    facts.add("components", _components(h.get("components")))
    facts.add("waf", h.get("waf"))
    facts.add("html", _excerpt(h.get("html")))
    return facts


def _versions(value: Any) -> str:
    """TLS versions offered, then those refused (the service lists them with a leading "-")."""
    if not isinstance(value, list):
        return text_of(value)
    names = [plain(v) for v in value[:MAX_MEMBERS] if not empty(v) and not isinstance(v, (dict, list))]
    offered = [n for n in names if not n.startswith("-")]
    refused = [n[1:] for n in names if n.startswith("-")]
    return text_of(offered) + (f" (refused: {text_of(refused)})" if refused else "")


def _tls(s: Any) -> list[Fact]:
    facts = _Facts()
    if not isinstance(s, Mapping):
        facts.add("ssl", s)
        return facts
    cert = s.get("cert")
    if isinstance(cert, Mapping):
        subject, issuer = cert.get("subject"), cert.get("issuer")
        facts.add("subject", text_of(subject))
        self_signed = not empty(subject) and subject == issuer
        facts.add("issuer", text_of(issuer) + (" (self-signed)" if self_signed else ""), "warn" if self_signed else "")
        expired = cert.get("expired") is True
        if not (empty(cert.get("issued")) and empty(cert.get("expires"))):
            valid = f"{cert_date(cert.get('issued'))} to {cert_date(cert.get('expires'))}"
            facts.add("valid", valid + (", EXPIRED" if expired else ""), "bad" if expired else "")
        elif expired:
            facts.add("valid", "EXPIRED", "bad")
        facts.add("serial", cert.get("serial"))
        fingerprint = cert.get("fingerprint")
        facts.add(
            "fingerprint", fingerprint.get("sha256") or fingerprint if isinstance(fingerprint, Mapping) else fingerprint
        )
        facts.add("signature", cert.get("sig_alg"))
        key = cert.get("pubkey")
        if isinstance(key, Mapping):
            facts.add("key", " ".join(t for t in (text_of(key.get("type")), text_of(key.get("bits"))) if t))
        else:
            facts.add("key", key)
    else:
        facts.add("cert", cert)
    facts.add("versions", _versions(s.get("versions")))
    cipher = s.get("cipher")
    if isinstance(cipher, Mapping):
        about = [
            f"{text_of(cipher.get('bits'))} bits" if not empty(cipher.get("bits")) else "",
            text_of(cipher.get("version")),
        ]
        about = [a for a in about if a]
        name = text_of(cipher.get("name"))
        facts.add("cipher", f"{name} ({', '.join(about)})" if name and about else name or ", ".join(about))
    else:
        facts.add("cipher", cipher)
    facts.add("alpn", s.get("alpn"))
    facts.add("ja3s", s.get("ja3s"))
    facts.add("jarm", s.get("jarm"))
    dh = s.get("dhparams")
    bits = dh.get("bits") if isinstance(dh, Mapping) else dh
    facts.add("DH params", f"{text_of(bits)} bits" if number(bits) is not None else bits)
    chain = s.get("chain")
    facts.add("chain", f"{len(chain)} certificate(s)" if isinstance(chain, list) and chain else chain)
    return facts


def _ssh(s: Any) -> list[Fact]:
    facts = _Facts()
    if not isinstance(s, Mapping):
        facts.add("ssh", s)
        return facts
    facts.add("key type", s.get("type"))
    facts.add("fingerprint", s.get("fingerprint"))
    facts.add("hassh", s.get("hassh"))
    facts.add("cipher", s.get("cipher"))
    facts.add("mac", s.get("mac"))
    _members(facts, s.get("kex"), "kex")
    return facts


def _free_form(value: Any, name: str) -> list[Fact]:
    facts = _Facts()
    _members(facts, value, name)
    return facts


SECTIONS: list[tuple[str, str, Callable[[Any], list[Fact]]]] = [  # most telling first
    ("TLS", "ssl", _tls),
    ("HTTP", "http", _http),
    ("SSH", "ssh", _ssh),
    ("DNS", "dns", lambda v: _free_form(v, "dns")),
    ("SNMP", "snmp", lambda v: _free_form(v, "snmp")),
    ("NTP", "ntp", lambda v: _free_form(v, "ntp")),
    ("Findings", "opts", lambda v: _free_form(v, "opts")),
]


def vulns_of(value: Any) -> list[Vuln]:
    """Vulnerabilities, highest CVSS first (missing or non-numeric last), from an object or a list of ids."""
    if isinstance(value, Mapping):
        items = head(value, MAX_VULNS * 5)
    elif isinstance(value, list):
        items = [
            (v, None) if not isinstance(v, Mapping) else (v.get("id") or v.get("cve") or "?", v)
            for v in value[: MAX_VULNS * 5]
        ]
    else:
        items = [(value, None)] if not empty(value) else []
    vulns = []
    for cve, about in items:
        about = about if isinstance(about, Mapping) else {}
        cvss = about.get("cvss")
        verified = about.get("verified")
        vulns.append(
            Vuln(
                cve=text_of(cve, max_chars=60) or "?",
                cvss=text_of(cvss, max_chars=20),
                score=number(cvss),
                verified=plain(verified) if isinstance(verified, bool) else text_of(verified, max_chars=20),
                summary=text_of(about.get("summary"), max_chars=300),
            )
        )
    return sorted(vulns, key=lambda v: (v.score is None, -(v.score or 0.0), v.cve))[:MAX_VULNS]


def describe_service(banner: Any, raw_chars: int = 8000) -> ServiceText:
    """Everything an analyst reads about one banner, every value inert."""
    b = as_dict(banner)
    sections = [Section("", _general(b))]
    for title, member, build in SECTIONS:
        if not empty(b.get(member)):
            facts = build(b[member])
            if facts:
                sections.append(Section(title, facts))
    raw = block(b.get("data"), raw_chars) if not empty(b.get("data")) else ""
    return ServiceText(service_key(b), [s for s in sections if s.facts], vulns_of(b.get("vulns")), raw)


def banner_for_clipboard(banner: Any) -> ClipboardText:
    """The raw banner text to copy (``y`` in the host pane): no escape sequence or control
    character, at most 64 KiB; ``.note("the raw banner")`` says whether it was cut."""
    data = as_dict(banner).get("data")
    return for_clipboard(data if isinstance(data, str) else text_of(data, max_chars=65_536))


# What an analyst pivots on, named with both values when it changes between two scans of a service.
NAMED_CHANGES = (
    ("product", "product"),
    ("version", "version"),
    ("HTTP title", "http.title"),
    ("HTTP status", "http.status"),
    ("HTTP server", "http.server"),
    ("favicon hash", "http.favicon.hash"),
    ("HTML hash", "http.html_hash"),
    ("HASSH", "ssh.hassh"),
    ("JARM", "ssl.jarm"),
    ("JA3S", "ssl.ja3s"),
)


def _ssh_host_key(b: dict) -> str:
    parts = (get_path(b, "ssh.type"), get_path(b, "ssh.fingerprint"))
    return " ".join(text_of(p, max_chars=60) for p in parts if not empty(p))


# Lines of a banner that differ between any two scans of an unchanged service: its clock, its
# cookies, the request's id. Left out when telling whether the banner's text changed.
VOLATILE_HEADERS = re.compile(
    r"^(date|expires|age|last-modified|set-cookie|etag|x-request-id|x-runtime|cf-ray|report-to|nel)\s*:.*$",
    re.IGNORECASE | re.MULTILINE,
)
# A time of day or a date written in the text itself (an SMTP greeting, an FTP banner's clock).
CLOCK = re.compile(r"\b\d{1,2}:\d{2}:\d{2}\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2} [A-Z][a-z]{2} \d{4}\b")


def steady_text(data: Any) -> str:
    """A banner's text without what changes on every scan of the same service."""
    text = data if isinstance(data, str) else text_of(data, max_chars=65_536)
    return CLOCK.sub("", VOLATILE_HEADERS.sub("", text))


def _source(b: dict) -> str:
    """What collected a banner: the tool whose output was imported, else the crawler."""
    name = get_path(b, "tool.name")
    return name if isinstance(name, str) else ""


def changes(older: Any, newer: Any) -> list[str]:
    """What differs between two scans of one service, in words. A field only one of two
    different tools collects (nmap writes no HTTP status) is no change of the service."""
    a, b = as_dict(older), as_dict(newer)
    same_source = _source(a) == _source(b)

    def differs(before: Any, after: Any) -> bool:
        return before != after and (same_source or not (empty(before) or empty(after)))

    out = []
    for label, path in NAMED_CHANGES:
        before, after = get_path(a, path), get_path(b, path)
        if differs(before, after):
            out.append(f"{label}: {text_of(before, max_chars=60) or '-'} → {text_of(after, max_chars=60) or '-'}")
    if differs(key_before := _ssh_host_key(a), key_after := _ssh_host_key(b)):
        out.append(f"SSH host key: {key_before or '-'} → {key_after or '-'}")
    if differs(get_path(a, "ssl.cert.fingerprint.sha256"), get_path(b, "ssl.cert.fingerprint.sha256")):
        out.append("TLS certificate changed")
    old_ids, new_ids = {v.cve for v in vulns_of(a.get("vulns"))}, {v.cve for v in vulns_of(b.get("vulns"))}
    if differs(sorted(old_ids), sorted(new_ids)):
        if new_ids - old_ids:
            out.append("new vulnerabilities: " + ", ".join(sorted(new_ids - old_ids)))
        if old_ids - new_ids:
            out.append("no longer vulnerable to: " + ", ".join(sorted(old_ids - new_ids)))
    if not out and same_source and steady_text(a.get("data")) != steady_text(b.get("data")):
        out.append("banner text changed")
    return out
