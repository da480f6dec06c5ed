"""Which scan results are an account's alone, and how a query leaves the others' out (issue 44)."""

from __future__ import annotations

import json

from spyglass.query import parse_strict
from spyglass.query.ast import Filter
from spyglass.server.scanner.private import PRIVATE, mark, owner, private_body, scoped, visible


def result(ip: str, account: int = 7) -> dict:
    return mark({"ip_str": ip, "port": 22, "_intel": {"options": {"scan": "ABC"}}}, account)


def test_results_at_the_servers_own_addresses_are_the_accounts_alone():
    own = [result(ip) for ip in ("127.0.0.1", "10.1.2.3", "::1", "169.254.1.1", "::ffff:127.0.0.1")]
    assert [owner(b) for b in own] == [7] * 5 and all(private_body(json.dumps(b).encode()) for b in own)
    public = result("8.8.8.8")
    assert owner(public) is None and "tags" not in public and not private_body(json.dumps(public).encode())
    talking = {"ip_str": "8.8.8.8", "data": f"hello {PRIVATE}"}  # says the word, is no private result
    assert not private_body(json.dumps(talking).encode())
    assert visible([*own, public], 7) == [*own, public] and visible([*own, public], 8) == [public]


def test_a_query_leaves_private_results_out_unless_it_asks_for_the_callers_scans_only():
    hidden = Filter("tag", (PRIVATE,), negated=True)
    mine = {"abc"}
    for text, kept in [
        ("scan:ABC port:22", True),
        ("scan:ABC,XYZ", False),
        ("-scan:XYZ", False),
        ("port:22", False),
        ("scan:XYZ", False),
    ]:
        query = scoped(parse_strict(text), lambda scan_id: scan_id in mine)
        assert (hidden not in query.terms) == kept, text
