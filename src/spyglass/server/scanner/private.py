"""Results of scans of the server's own networks are the asking account's alone (issue 44).

A scan of loopback, or of another network of the machine's own (``netools.networks.internal``,
the rule notifier destinations and geonet targets follow), reaches what the operator runs beside
the backend: its ClickHouse, its PostgreSQL, its mail relay. Such a result is stored as any other,
in every banner store alike, with the tag :data:`PRIVATE` and the account in ``_intel.options``.
Every read an account makes leaves the tagged banners out (``-tag:private-scan``), unless all it
asks for are results of its own scans (a ``scan:`` filter naming only those); a host lookup keeps
the account's own. Banners imported or collected stay everyone's, whatever their address.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable

from spyglass import DEFAULT_NAMESPACE
from spyglass.netools.networks import internal
from spyglass.query.ast import Filter, Query
from spyglass.server.banners.keys import PRIVATE

MOST_SCANS = 16  # scan ids of one query looked up to decide it asks for the caller's own only
META = f"_{DEFAULT_NAMESPACE}"


def mark(banner: dict, account_id: int) -> dict:
    """A scan's result, the account's alone when its address is of the machine's own networks."""
    if internal(ipaddress.ip_address(banner["ip_str"])):
        banner["tags"] = [*banner.get("tags", []), PRIVATE]
        banner[META]["options"]["account"] = account_id
    return banner


def owner(banner: dict) -> int | None:
    """The account a private result is for; None for a banner everyone may read."""
    if PRIVATE not in (banner.get("tags") or ()):
        return None
    account = ((banner.get(META) or {}).get("options") or {}).get("account")
    return account if isinstance(account, int) else -1  # damaged: nobody's


def private_body(body: bytes) -> bool:
    """Whether a banner's stored bytes are a private result (parsed only where the tag is in them)."""
    return PRIVATE.encode() in body and owner(json.loads(body)) is not None


def visible(banners: list[dict], account_id: int) -> list[dict]:
    return [b for b in banners if owner(b) in (None, account_id)]


def scoped(query: Query, owns: Callable[[str], bool]) -> Query:
    """``query`` as an account may run it: other accounts' private results left out; all of
    them, its own too, unless a ``scan:`` filter names only scans ``owns`` says are its own."""
    for f in query.filters:
        if f.name == "scan" and not f.negated and len(f.values) <= MOST_SCANS:
            if all(owns(str(v)) for v in f.values):
                return query
    return Query(query.source, [*query.terms, Filter("tag", (PRIVATE,), negated=True)], list(query.errors))
