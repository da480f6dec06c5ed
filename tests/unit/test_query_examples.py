"""Every filter has an example query, and each finds banners in the demo data (but those of what
scans saw besides banners, which tests/store/test_seen.py finds)."""

from __future__ import annotations

import pytest

from spyglass.datagen import generate
from spyglass.query import FACETS, FILTER_EXAMPLES, FILTERS, SEEN_FILTERS, parse_facets, parse_strict
from spyglass.server.index import BannerIndex
from spyglass.server.ingest.importer import import_banners
from spyglass.server.runner import DEMO_BANNERS


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    index = BannerIndex(tmp_path_factory.mktemp("demo"))
    import_banners(index, generate(DEMO_BANNERS, seed=1))
    yield index
    index.close()


def test_every_filter_has_one_example_of_itself():
    assert set(FILTER_EXAMPLES) == set(FILTERS)
    for name, example in FILTER_EXAMPLES.items():
        assert [f.name for f in parse_strict(example).filters] == [name]


@pytest.mark.parametrize("name", sorted(set(FILTER_EXAMPLES) - SEEN_FILTERS))
def test_each_example_finds_demo_banners(demo, name):
    assert demo.count(parse_strict(FILTER_EXAMPLES[name]), [])[0] > 0


def test_every_facet_counts_the_demo_data(demo):
    _, facets = demo.count(parse_strict("port:22,80,443,3389,6379,27017,873"), parse_facets(",".join(FACETS)))
    empty = sorted(name for name, values in facets.items() if not values)
    assert empty == []
