"""Trends as series, tables and charts (present/trends.py): month windows, facet series, ticks,
hostile labels, 16-colour output, and charts that render the same under any hash seed."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spyglass.models import TrendsResponse
from spyglass.present import trends as t

MONTHS = ["2025-01", "2025-02", "2025-03", "2025-04"]
RESPONSE = TrendsResponse.model_validate(
    {
        "total": 9,
        "matches": [{"month": m, "count": c} for m, c in zip(MONTHS, [4, 0, 3, 2], strict=True)],
        "facets": {
            "country": [
                {"key": "2025-01", "values": [{"value": "US", "count": 3}, {"value": "DE", "count": 1}]},
                {"key": "2025-02", "values": []},
                {"key": "2025-03", "values": [{"value": "DE", "count": 2}, {"value": "\x1b[2Jx", "count": 1}]},
                {"key": "2025-04", "values": [{"value": "US", "count": 2}]},
            ]
        },
    }
)


def test_month_window_includes_both_ends_and_either_may_be_open():
    assert MONTHS[t.month_window(MONTHS, "2025-02", "2025-03")] == ["2025-02", "2025-03"]
    assert MONTHS[t.month_window(MONTHS, None, "2025-01")] == ["2025-01"]
    assert MONTHS[t.month_window(MONTHS, "2025-04", None)] == ["2025-04"]
    assert MONTHS[t.month_window(MONTHS, "2026-01", None)] == []
    assert MONTHS[t.month_window(MONTHS, "2025-03", "2025-02")] == []


def test_facet_series_are_the_top_values_by_their_sum_with_inert_labels():
    series = t.facet_series(RESPONSE, "country", top=3)
    assert [(s.label, s.counts, sorted(s.unknown)) for s in series] == [
        ("US", [3, 0, 0, 2], [1, 2]),
        ("DE", [1, 0, 2, 0], [1, 3]),
        ("␛[2Jx", [0, 0, 1, 0], [0, 1, 3]),  # the escape shows as a symbol
    ]
    assert t.table(MONTHS, series[:1])[1] == [["2025-01", "3"], ["2025-02", "·"], ["2025-03", "·"], ["2025-04", "2"]]
    window = t.month_window(MONTHS, "2025-03", None)
    assert [(s.label, s.counts) for s in t.facet_series(RESPONSE, "country", 1, window)] == [("DE", [2, 0])]
    assert t.facet_series(RESPONSE, "port") == []


@given(st.integers(min_value=0, max_value=10**9))
def test_y_ticks_start_at_zero_cover_the_top_in_at_most_five_round_steps(top):
    ticks = t.y_ticks(top)
    assert ticks[0] == 0 and ticks[-1] >= top and len(ticks) <= 6
    step = ticks[1] - ticks[0]
    assert all(b - a == step for a, b in zip(ticks, ticks[1:], strict=False))
    assert re.fullmatch(r"[125]0*", str(step))
    assert all(len(t.short(y)) <= 5 for y in ticks)


@given(st.integers(min_value=1, max_value=400), st.integers(min_value=20, max_value=300))
def test_x_ticks_fit_their_labels_in_the_width(count, width):
    ticks = t.x_ticks([f"m{i}" for i in range(count)], width)
    assert ticks[0] == 0 and ticks == sorted(set(ticks))
    assert len(ticks) * 9 <= max(width, 9 + 8)


def test_table_lines_align_months_and_numbers():
    lines = t.table_lines(MONTHS[:2], [t.Series("a", [1200, 3]), t.Series("b", [0, 45])])
    assert lines == ["Month        a   b", "2025-01  1,200   0", "2025-02      3  45"]


def test_charts_use_only_the_16_ansi_colours():
    text = t.chart_text(MONTHS, t.facet_series(RESPONSE, "country", 3), "bar", 60, 12)
    codes = set(re.findall(r"\x1b\[([0-9;]*)m", text))
    colours = {int(c.split(";")[2]) for c in codes if c.startswith("38;5;")}
    assert colours and colours <= set(range(16))
    assert not any(c.startswith(("48;", "38;2;")) for c in codes)  # no background, no true colour


@pytest.mark.external
def test_a_chart_renders_the_same_under_any_hash_seed():
    script = (
        "from spyglass.present import trends as t\n"
        "months = [f'{y}-{m:02d}' for y in (2024, 2025) for m in range(1, 13)]\n"
        "series = [t.Series(n, [(i * k) % 17 for i in range(24)]) for k, n in ((3, 'a'), (5, 'b'), (7, 'c'))]\n"
        "print(t.chart_text(months, series, 'bar', 80, 14) + t.chart_text(months, series, 'line', 50, 9))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": ":".join(sys.path)},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1 and "2024-01" in outputs.pop()


def test_a_plain_chart_has_no_braille_and_no_fills_a_console_font_lacks():
    from plotext._figure import _figure_class

    months = ["2025-01", "2025-02", "2025-03", "2025-04"]
    series = [t.Series(f"s{i}", [i + 1, 3, 2 + i, 5]) for i in range(6)]
    for kind in t.KINDS:
        fancy = t.build(_figure_class(), months, series, kind, 60, 14)
        plain = t.build(_figure_class(), months, series, kind, 60, 14, t.Look(plain=True))
        glyphs = set(re.sub(r"\x1b\[[0-9;]*m", "", plain))
        assert not any(0x2800 <= ord(c) <= 0x28FF for c in glyphs) and not glyphs & set("▞▚▪")
        assert glyphs & {"*", "#", "=", "+"}
        assert set(fancy) & ({chr(c) for c in range(0x2801, 0x2900)} | set("▞▚▪"))
