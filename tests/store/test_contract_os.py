"""Issue 46: nmap -O's OS classes (vendor, family, generation, type) and the best class's accuracy
as filters and facets, every store alike and as the in-memory matcher reads them."""

from __future__ import annotations

import pytest

from spyglass.query import parse_strict
from spyglass.query.match import matcher
from tests.store.test_contract import add, banner, count

LINUX = [
    {"vendor": "Linux", "family": "Linux", "generation": "5.X", "type": "general purpose", "accuracy": 100},
    {"vendor": "Linux", "family": "Linux", "generation": "4.X", "type": "general purpose", "accuracy": 95},
]
WINDOWS = [
    {"vendor": "Microsoft", "family": "Windows", "generation": "2019", "type": "general purpose", "accuracy": 93}
]
ROUTER = [{"vendor": "MikroTik", "family": "RouterOS", "type": "router"}]  # no generation, no accuracy
ODD = [  # as a banner from elsewhere may hold them: each odd part is skipped, the rest is read
    "Linux",
    None,
    {"vendor": ["Cisco", {"x": 1}], "family": 7, "generation": "", "type": None, "accuracy": "99"},
    {"vendor": "HP", "accuracy": True},
    {"family": "embedded", "accuracy": 101},
]
BANNERS = [
    banner("198.18.9.1", os_classes=LINUX),
    banner("198.18.9.1", port=80, os_classes=LINUX),
    banner("198.18.9.2", os_classes=WINDOWS),
    banner("198.18.9.3", os_classes=ROUTER),
    banner("198.18.9.4", os_classes=ODD),
    banner("198.18.9.5", os_classes={"vendor": "Linux"}),  # not a list: no class
    banner("198.18.9.6"),
]
QUERIES = {
    "os.vendor:linux": 2,
    "os.family:LINUX os.generation:4.x": 2,
    'os.type:"general purpose"': 3,
    "os.type:router os.vendor:mikrotik": 1,
    "os.generation:2019,5.X": 3,
    "os.accuracy:100": 2,
    "os.accuracy:95": 0,  # the best class's accuracy, not any class's
    "os.accuracy:93,0": 1,
    "os.vendor:cisco": 1,
    "os.family:7": 1,
    "os.vendor:hp": 1,
    "os.family:embedded": 1,
    "os.accuracy:99": 0,  # text is not a number
    "os.accuracy:1": 0,  # true is no accuracy
    "-os.vendor:linux": 5,
    "os.vendor:linu": 0,  # a whole value
}


@pytest.mark.parametrize("query", sorted(QUERIES))
def test_os_class_filters_find_the_same_banners_on_every_store_and_in_memory(store, query):
    add(store, *BANNERS)
    assert count(store, query)[0] == QUERIES[query]
    assert sum(map(matcher(parse_strict(query)), BANNERS)) == QUERIES[query]


def test_os_class_facets_count_each_banner_once_per_value(store):
    add(store, *BANNERS)
    names = "os.vendor,os.family,os.generation,os.type,os.accuracy"
    _, facets = count(store, "port:22,80", names)
    assert sorted(facets["os.vendor"], key=lambda v: v["value"]) == [
        {"count": 1, "value": "Cisco"},
        {"count": 1, "value": "HP"},
        {"count": 2, "value": "Linux"},
        {"count": 1, "value": "Microsoft"},
        {"count": 1, "value": "MikroTik"},
    ]
    assert facets["os.family"][0] == {"count": 2, "value": "Linux"} and len(facets["os.family"]) == 5
    assert sorted((v["value"], v["count"]) for v in facets["os.generation"]) == [("2019", 1), ("4.X", 2), ("5.X", 2)]
    assert facets["os.type"] == [{"count": 3, "value": "general purpose"}, {"count": 1, "value": "router"}]
    assert facets["os.accuracy"] == [{"count": 2, "value": "100"}, {"count": 1, "value": "93"}]
