"""What the host pane shows of a service, and what changed between two scans of it."""

from __future__ import annotations

from datetime import datetime

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from spyglass.models import Banner
from spyglass.safetext import clean, safe_text


def _grid() -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim", no_wrap=True)
    table.add_column(overflow="fold")
    return table


def _row(table: Table, label: str, value) -> None:
    if value not in (None, "", [], {}):
        # The label may come from a banner too (SSH kex member names): never a str, which Rich reads as markup.
        table.add_row(safe_text(label, one_line=True, max_chars=60),
                      value if isinstance(value, Text) else safe_text(value, one_line=True, max_chars=400))


def cvss_score(value) -> float:
    """A CVSS for sorting: numbers as they are, numeric text parsed, anything else ("high") 0."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return 0.0


def cert_date(value: str | None) -> str:
    if not value:
        return "-"
    try:
        return datetime.strptime(value, "%Y%m%d%H%M%SZ").strftime("%Y-%m-%d")
    except ValueError:
        return clean(value, one_line=True)


def name_of(parts: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in parts.items())


def service_details(b: Banner) -> Group:
    """Everything an analyst reads about one banner; every value through the safe-text path."""
    sections = []
    general = _grid()
    _row(general, "service", f"{b.port}/{b.transport}  {b.module or ''}")
    _row(general, "product", b.product_line)
    _row(general, "info", b.info)
    _row(general, "cpe", ", ".join(b.cpe23 or b.cpe))
    _row(general, "tags", ", ".join(b.tags))
    _row(general, "seen", b.timestamp.replace("T", " ")[:19])
    if b.cloud:
        _row(general, "cloud", " ".join(x for x in (b.cloud.provider, b.cloud.service, b.cloud.region) if x))
    sections.append(general)
    if b.http:
        h = b.http
        http = _grid()
        _row(http, "HTTP status", h.status)
        _row(http, "title", h.title)
        _row(http, "server", h.server)
        _row(http, "components", ", ".join(f"{n} ({', '.join(c.categories)})" if c.categories else n
                                           for n, c in h.components.items()))
        _row(http, "waf", (h.model_extra or {}).get("waf"))
        sections += [Text("HTTP", style="bold"), http]
    if b.ssl:
        s, cert = b.ssl, b.ssl.cert
        tls = _grid()
        if cert:
            expired = Text(" EXPIRED", style="bold red") if cert.expired else Text("")
            self_signed = cert.subject == cert.issuer and bool(cert.subject)
            _row(tls, "subject", name_of(cert.subject))
            _row(tls, "issuer", Text.assemble(clean(name_of(cert.issuer), one_line=True),
                                              (" (self-signed)", "yellow") if self_signed else ""))
            _row(tls, "valid", Text.assemble(f"{cert_date(cert.issued)} to {cert_date(cert.expires)}", expired))
            _row(tls, "fingerprint", cert.fingerprint.get("sha256"))
            _row(tls, "serial", cert.serial)
        _row(tls, "versions", " ".join(s.versions))
        _row(tls, "cipher", s.cipher.name if s.cipher else None)
        _row(tls, "chain", f"{len(s.chain)} certificate(s)" if s.chain else None)
        _row(tls, "jarm", s.jarm)
        sections += [Text("TLS", style="bold"), tls]
    if b.ssh:
        ssh = _grid()
        _row(ssh, "key type", b.ssh.type)
        _row(ssh, "fingerprint", b.ssh.fingerprint)
        _row(ssh, "hassh", b.ssh.hassh)
        for name, values in b.ssh.kex.items():
            _row(ssh, name.replace("_", " "), ", ".join(map(str, values)) if isinstance(values, list) else values)
        sections += [Text("SSH", style="bold"), ssh]
    if b.vulns:
        vulns = Table(box=None, padding=(0, 2), show_header=True, header_style="bold")
        for column in ("CVE", "CVSS", "verified", "summary"):
            vulns.add_column(column, overflow="fold")
        for cve, v in sorted(b.vulns.items(), key=lambda kv: -cvss_score(kv[1].cvss)):
            vulns.add_row(safe_text(cve, one_line=True), safe_text(v.cvss, one_line=True),
                          "yes" if v.verified else "no", safe_text(v.summary, one_line=True, max_chars=300))
        sections += [Text("Vulnerabilities", style="bold"), vulns]
    sections += [Text("Raw banner", style="bold"), safe_text(b.data, max_chars=8000)]
    return Group(*sections)


def changes(older: Banner, newer: Banner) -> list[str]:
    """What differs between two scans of one service, in words."""
    out = []

    def compare(label: str, a, b) -> None:
        if a != b:
            out.append(f"{label}: {clean(a or '-', one_line=True, max_chars=60)} → {clean(b or '-', one_line=True, max_chars=60)}")

    compare("product", older.product, newer.product)
    compare("version", older.version, newer.version)
    compare("HTTP title", older.http.title if older.http else None, newer.http.title if newer.http else None)
    compare("HTTP status", older.http.status if older.http else None, newer.http.status if newer.http else None)
    old_fp = older.ssl.cert.fingerprint.get("sha256") if older.ssl and older.ssl.cert else None
    new_fp = newer.ssl.cert.fingerprint.get("sha256") if newer.ssl and newer.ssl.cert else None
    if old_fp != new_fp:
        out.append("TLS certificate changed")
    added, gone = set(newer.vulns) - set(older.vulns), set(older.vulns) - set(newer.vulns)
    if added:
        out.append("new vulnerabilities: " + ", ".join(sorted(added)))
    if gone:
        out.append("no longer vulnerable to: " + ", ".join(sorted(gone)))
    if not out and older.data != newer.data:
        out.append("banner text changed")
    return out


class ServiceDetail(Static):
    """The panel of one service: its details under a "Service PORT/TRANSPORT" border title."""

    def show(self, banner: Banner) -> None:
        self.border_title = safe_text(f"Service {banner.port}/{banner.transport}", one_line=True)
        self.update(service_details(banner))
