"""The patterns the API document carries say what the server takes (issue 44, minor 10): an
address or network the pattern matches is one ipaddress reads, every address ipaddress writes
matches it, and text the control patterns match is what has_control and strip() let through."""

from __future__ import annotations

import ipaddress
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from spyglass.netools.targets import IP_PATTERN, NETWORK_PATTERN
from spyglass.safetext import NO_CONTROL_PATTERN, NOT_BLANK_PATTERN, has_control


def ecma(pattern: str) -> str:
    """A pattern read as JSON Schema reads it: its ``$`` is the end of the text, where Python's
    also matches before a last newline (so '\\n' seemed to match the no-control pattern)."""
    return pattern[:-1] + r"\Z" if pattern.endswith("$") else pattern


@settings(max_examples=500)
@given(st.from_regex(ecma(f"^{NETWORK_PATTERN}$")), st.from_regex(ecma(f"^{IP_PATTERN}$")))
def test_what_the_patterns_match_ipaddress_reads(network, address):
    ipaddress.ip_network(network, strict=False)
    ipaddress.ip_address(address)


@settings(max_examples=500)
@given(st.ip_addresses(), st.integers(0, 128), st.booleans())
def test_every_address_and_network_ipaddress_writes_matches(address, prefix, exploded):
    assert re.fullmatch(IP_PATTERN, address.exploded if exploded else str(address))
    network = ipaddress.ip_network(f"{address}/{min(prefix, address.max_prefixlen)}", strict=False)
    assert re.fullmatch(NETWORK_PATTERN, str(network))


@given(st.text())
def test_the_text_patterns_agree_with_has_control(text):
    if any("\ud800" <= c <= "\udfff" for c in text):
        return  # no UTF-8 text holds a lone surrogate
    assert bool(re.match(ecma(NO_CONTROL_PATTERN), text)) == (not has_control(text))
    assert bool(re.match(ecma(NOT_BLANK_PATTERN), text)) == (not has_control(text) and bool(text.strip()))


def test_a_newline_alone_is_refused_by_the_patterns():
    assert not re.match(ecma(NO_CONTROL_PATTERN), "\n") and not re.match(ecma(NOT_BLANK_PATTERN), "x\n")
