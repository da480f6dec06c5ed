"""The alert triggers: named rules over newly collected banners.

A rule is a query in the shared search language, matched with the index's own compiler against
an in-memory index of the batch, so a trigger means exactly what the same search means.
``new_service`` is the one trigger no query can say: the first banner ever of an ip:port.
"""

from __future__ import annotations

from dataclasses import dataclass

import tantivy

from spyglass.query import parse_strict
from spyglass.server.index.compiler import compile_query
from spyglass.server.index.schema import build_schema, open_index
from spyglass.server.index.store import index_json, prepare, rowids

MATCH_ALL = "*"
NEW_SERVICE = "new_service"
# Ports a service is commonly expected on: anything else is "uncommon".
COMMON_PORTS = "21,22,25,53,80,110,143,443,465,587,993,995,8080,8443"


@dataclass(frozen=True)
class Trigger:
    name: str
    rule: str  # a search query; "*" matches every banner; "" for new_service (no query says it)
    description: str


TRIGGERS: dict[str, Trigger] = {
    t.name: t
    for t in (
        Trigger("any", MATCH_ALL, "Match any service that is discovered"),
        Trigger("industrial_control_system", "tag:ics", "Services associated with industrial control systems"),
        Trigger("malware", "tag:malware,compromised", "Compromised or malware-related services"),
        Trigger(
            "uncommon", f"-port:{COMMON_PORTS}", "Services on ports other than the common web, mail, DNS and SSH ones"
        ),
        Trigger("internet_scanner", "tag:scanner", "Devices that scan the internet"),
        Trigger(NEW_SERVICE, "", "A service (ip:port) that has not been seen before"),
        Trigger("vulnerable", "has_vuln:true", "Services with a known vulnerability"),
    )
}


class UnknownTrigger(ValueError):
    pass


def parse_names(text: str) -> list[str]:
    """``any,new_service`` as trigger names; UnknownTrigger names the ones that do not exist."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UnknownTrigger("no trigger named: give one or more of " + ", ".join(TRIGGERS))
    unknown = [n for n in names if n not in TRIGGERS]
    if unknown:
        raise UnknownTrigger(f"Unknown trigger {', '.join(unknown)}: the triggers are {', '.join(TRIGGERS)}")
    return list(dict.fromkeys(names))


_SCHEMA: tantivy.Schema | None = None


def matching(banners: list[tuple[dict, bool]], names: set[str]) -> list[set[str]]:
    """For each (banner, new_service), the triggers among ``names`` it matches. Blocking (it
    builds a small in-memory index): call it from a thread."""
    global _SCHEMA
    out: list[set[str]] = [set() for _ in banners]
    for i, (_, new) in enumerate(banners):
        for name in names:
            rule = TRIGGERS[name].rule
            if rule == MATCH_ALL or (name == NEW_SERVICE and new):
                out[i].add(name)
    ruled = [n for n in names if TRIGGERS[n].rule not in ("", MATCH_ALL)]
    if not ruled or not banners:
        return out
    _SCHEMA = _SCHEMA or build_schema()
    index = open_index(_SCHEMA)  # in memory
    writer = index.writer(heap_size=15_000_000, num_threads=1)
    for i, (banner, _) in enumerate(banners):
        writer.add_json(index_json(i, True, prepare(banner).doc))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    for name in ruled:
        query = compile_query(_SCHEMA, parse_strict(TRIGGERS[name].rule))
        hits = searcher.search(query, limit=len(banners)).hits
        for i in rowids(searcher, [address for _, address in hits]):
            out[i].add(name)
    return out
