"""The alert triggers: named rules over newly collected banners.

A rule is a query in the shared search language, tested against each banner by the one matcher
of a banner in memory (``query/match.py``, which the store contract suite holds to agree with
every store), so a trigger means what the same search means, and no store's code is loaded.
``new_service`` is the one trigger no query can say: the first banner ever of an ip:port.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from spyglass.query import parse_strict
from spyglass.query.match import matcher

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


# What parse_names takes, for the API document: one name (an enum), or a comma list of them.
_NAME = "(?:" + "|".join(TRIGGERS) + ")"
NAMES_PATTERN = rf"^\s*{_NAME}\s*(?:,\s*{_NAME}\s*)*$"


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


@cache
def _rule(name: str) -> Callable[[Any], bool]:
    return matcher(parse_strict(TRIGGERS[name].rule))


def matching(banners: list[tuple[dict, bool]], names: set[str]) -> list[set[str]]:
    """For each (banner, new_service), the triggers among ``names`` it matches."""
    out: list[set[str]] = []
    for banner, new in banners:
        hits = set()
        for name in names:
            rule = TRIGGERS[name].rule
            if rule == MATCH_ALL or (name == NEW_SERVICE and new) or (rule and _rule(name)(banner)):
                hits.add(name)
        out.append(hits)
    return out
