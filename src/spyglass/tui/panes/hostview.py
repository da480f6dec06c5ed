"""What the host pane shows of a service, and what changed between two scans of it. The text
comes from ``spyglass.present.host``; this module only lays it out in Rich renderables."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from spyglass.present.service import ServiceText, Vuln, changes, describe_service
from spyglass.tui.widgets.facts import fact_grid

__all__ = ["ServiceDetail", "changes", "service_details"]


def cvss_style(vuln: Vuln) -> str:
    score = vuln.score if vuln.score is not None else 0.0
    return "bold red" if score >= 9 else "red" if score >= 7 else "yellow" if score >= 4 else ""


def vulns_table(vulns: list[Vuln]) -> Table:
    table = Table(box=None, padding=(0, 2), show_header=True, header_style="bold")
    for column in ("CVE", "CVSS", "verified", "summary"):
        table.add_column(column, overflow="fold")
    for v in vulns:
        table.add_row(Text(v.cve), Text(v.cvss or "-", style=cvss_style(v)), Text(v.verified), Text(v.summary))
    return table


def service_details(banner: Any) -> Group:
    """Everything an analyst reads about one banner (a model or its raw JSON), all of it inert."""
    return layout(describe_service(banner))


def layout(service: ServiceText) -> Group:
    parts: list[RenderableType] = []
    for section in service.sections:
        if section.title:
            parts.append(Text(section.title, style="bold"))
        parts.append(fact_grid(section.facts))
    if service.vulns:
        parts += [Text("Vulnerabilities", style="bold"), vulns_table(service.vulns)]
    if service.raw:
        parts += [Text("Raw banner", style="bold"), Text(service.raw)]
    return Group(*parts)


class ServiceDetail(Static):
    """The panel of one service: its details under a "Service PORT/TRANSPORT" border title."""

    DEFAULT_CSS = "ServiceDetail { height: auto; border: round $primary 50%; padding: 0 1; }"

    def show(self, banner: Any) -> None:
        service = describe_service(banner)
        self.border_title = Text(f"Service {service.title}")
        self.update(layout(service))
