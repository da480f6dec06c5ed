"""Property tests for what the directory and DNS sections read from untrusted input: banners'
hostnames (any JSON), tag lists and the DNS pane's typed lookups."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from spyglass.netools.targets import is_hostname
from spyglass.server.dnsinfo import domain_records, last_seen
from spyglass.server.state.sqlite.directory import MAX_TAGS, TAG, check_tags
from spyglass.tui.panes.dns import items_of, pick_tool

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=10,
)
LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)


@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "ip_str": st.sampled_from(["192.0.2.1", "2001:db8::1", "not an ip", 7]),
                "timestamp": st.sampled_from(["2026-01-02T03:04:05.000001", "2026-01-02T03:04:05+02:00", "junk"]),
                "hostnames": JSON | st.lists(st.builds(lambda a, b: f"{a}.{b}corp.test", LABEL, LABEL)),
            }
        ),
        max_size=6,
    )
)
def test_domain_records_read_any_banner_and_keep_only_names_under_the_domain(banners):
    records = domain_records("corp.test", banners)
    for (sub, kind, value), seen in records.items():
        name = f"{sub}.corp.test" if sub else "corp.test"
        assert name.endswith("corp.test") and kind in ("A", "AAAA") and value in ("192.0.2.1", "2001:db8::1")
        assert seen in {last_seen(b["timestamp"]) for b in banners}


def test_last_seen_has_a_zone():
    assert last_seen("2026-01-02T03:04:05.000001") == "2026-01-02T03:04:05.000001+00:00"
    assert last_seen("2026-01-02T03:04:05+02:00") == "2026-01-02T03:04:05+02:00"


@given(st.lists(st.text(max_size=40), max_size=15))
def test_tags_are_checked_or_refused(raw):
    try:
        tags = check_tags(raw)
    except ValueError as exc:
        assert "tag" in str(exc)
        return
    assert len(tags) <= MAX_TAGS and len(set(tags)) == len(tags)
    assert all(TAG.match(tag) for tag in tags)


@given(st.text(max_size=80), st.sampled_from(["domain", "resolve", "reverse"]))
def test_the_dns_pane_picks_a_lookup_that_takes_what_was_typed(text, chosen):
    items = items_of(text)
    assert all(item and " " not in item and "," not in item for item in items)
    tool = pick_tool(items, chosen)
    assert tool in ("domain", "resolve", "reverse")
    if tool == "domain":
        assert len(items) <= 1
    if tool != "reverse" and items and all(is_hostname(i) for i in items):
        assert tool in ("domain", "resolve")
