"""The host view's Rich renderables: present's text laid out, nothing read as markup, any JSON
in any member rendered without an error."""

from __future__ import annotations

import copy
import io
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from spyglass.present.service import Fact
from spyglass.tui.panes.hostview import changes, service_details
from spyglass.tui.widgets.facts import fact_grid
from tests.unit.test_present import JSON, MEMBERS, REAL, SSH, inert, put


def render(renderable, width: int = 100) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None, force_terminal=True)
    console.print(renderable)
    return console.export_text()


def test_every_section_is_laid_out_once():
    text = render(service_details(REAL))
    for heading in ("TLS", "HTTP", "Findings", "Vulnerabilities", "Raw banner"):
        assert sum(line.strip() == heading for line in text.splitlines()) == 1
    assert "SSH" not in [line.strip() for line in text.splitlines()]
    assert "2024-01-01 to 2024-04-01, EXPIRED" in text
    assert re.search(r"CVE-2021-0002 +9\.8 +yes +critical", text)
    assert "HTTP/1.1 200 OK\nServer: nginx" in text and "␍" not in text


def test_markup_in_labels_and_values_is_literal():
    banner = copy.deepcopy(SSH)
    banner["ssh"]["kex"] = {"[@click=app.quit]": ["[/]"], "[/]": "[bold]x"}
    banner["vulns"] = {"[/]": {"cvss": "[red]high", "summary": "[link=https://x]y[/link]"}}
    text = render(service_details(banner))
    for literal in ("[@click=app.quit]", "[/]", "[bold]x", "[red]high", "[link=https://x]y[/link]"):
        assert literal in text


def test_fact_grid_keeps_tones_and_never_parses_markup():
    grid = fact_grid([Fact("valid", "EXPIRED", "bad"), ("[b]label[/b]", "[i]v"), ("n", 7), ("t", Text("kept"))])
    cells = [c for column in grid.columns for c in column._cells]
    assert all(isinstance(c, Text) for c in cells)
    assert cells[4].style == "bold red" and [c.plain for c in cells[:4]] == ["valid", "[b]label[/b]", "n", "t"]
    assert [c.plain for c in cells[4:]] == ["EXPIRED", "[i]v", "7", "kept"]


def test_changes_is_present_s():
    from spyglass.present import service

    assert changes is service.changes


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(MEMBERS), JSON), min_size=1, max_size=6), st.integers(20, 120))
def test_any_json_in_any_member_renders(assignments, width):
    banner = copy.deepcopy(REAL)
    for path, value in assignments:
        put(banner, path, value)
    assert inert(render(service_details(banner), width))
