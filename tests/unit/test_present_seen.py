"""What scans saw, as text: any JSON a server puts in a row is read defensively and shown inert."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from spyglass.present.seen import result_text, seen_facts, seen_lines

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_KEYS = ["kind", "open", "state", "reason", "ttl", "scan", "tool", "version", "file", "count", "extraports"]
_KINDS = st.sampled_from(["host", "port", "extraports"]) | _JSON
_WHAT = st.fixed_dictionaries({}, optional={k: _KINDS if k == "kind" else _JSON for k in _KEYS}) | _JSON


@given(st.lists(st.fixed_dictionaries({"seen": _WHAT}, optional={"port": _JSON, "timestamp": _JSON}), max_size=4))
def test_any_row_a_server_sends_is_shown_without_breaking(rows):
    lines = [*seen_lines({"seen": rows}), *(f.value for f in seen_facts({"seen": rows}))]
    for row in rows:
        lines += [t for t in result_text(row) or ()]
    assert all("\x1b" not in line and "\n" not in line for line in lines)


def test_a_count_of_open_ports_that_is_no_whole_number_is_left_out():
    assert result_text({"seen": {"kind": "host", "state": "up", "open": "x"}}) == ("host", "up", "")
    assert result_text({"seen": {"kind": "host", "state": "up", "open": 0}})[1] == "up (no open port)"
