"""The plans' budgets as docs/api.md says them: one table, the same figures as plans.py."""

from __future__ import annotations

from pathlib import Path

from spyglass.models import UsageLimits
from spyglass.server.plans import PLANS

API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_the_docs_table_is_the_plans():
    rows = {}
    for line in API_DOC.read_text().split("## Budgets of each plan")[1].split("\n## ")[0].splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0].startswith("`"):
            rows[cells[0].strip("`")] = [int(c.replace(",", "")) for c in cells[2:]]
    budgets = [name for name in UsageLimits.model_fields if name not in ("scan_credits", "query_credits")]
    assert rows == {name: [getattr(plan, name) for plan in PLANS.values()] for name in budgets}


def test_every_scan_an_hour_is_kept_to_be_counted():
    """The scans an hour are counted in the scans kept: no plan may start more than are kept."""
    from spyglass.server.state.scans import KEPT

    assert all(plan.scans_hour <= KEPT for plan in PLANS.values())
