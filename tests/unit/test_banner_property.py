"""Property: any JSON value in any member of a banner (the real member names of exported data)
imports, answers host lookups, searches and facets without raising, and comes back unchanged."""

from __future__ import annotations

import itertools
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spyglass.query import FACETS, parse_facets, parse_strict
from spyglass.server.index import BannerIndex
from spyglass.server.ingest.parsing import prepare_lines
from spyglass.server.routers.common import json_response
from spyglass.server.shaping import for_namespace, host_record, minified, served
from tests.unit.test_import_hostile import real_banner

MEMBERS = [
    ("asn",),
    ("vulns",),
    ("org",),
    ("isp",),
    ("os",),
    ("product",),
    ("version",),
    ("hostnames",),
    ("domains",),
    ("tags",),
    ("cpe",),
    ("cpe23",),
    ("hash",),
    ("data",),
    ("location",),
    ("cloud",),
    ("screenshot",),
    ("ipv6",),
    ("ip",),
    ("_shodan",),
    ("opts",),
    ("opts", "vulns"),
    ("opts", "heartbleed"),
    ("ssl",),
    ("ssl", "cert"),
    ("ssl", "cert", "serial"),
    ("ssl", "cert", "expired"),
    ("ssl", "cert", "subject"),
    ("ssl", "cert", "extensions"),
    ("ssl", "cert", "fingerprint"),
    ("ssl", "alpn"),
    ("ssl", "versions"),
    ("ssl", "dhparams"),
    ("ssl", "ja3s"),
    ("ssl", "jarm"),
    ("http",),
    ("http", "title"),
    ("http", "status"),
    ("http", "html"),
    ("http", "html_hash"),
    ("http", "redirects"),
    ("http", "favicon"),
    ("http", "favicon", "hash"),
    ("http", "favicon", "data"),
    ("http", "favicon", "location"),
    ("http", "components"),
    ("http", "waf"),
    ("http", "securitytxt"),
    ("dns",),
    ("dns", "recursive"),
    ("dns", "resolver_hostname"),
    ("snmp",),
    ("ssh",),
    ("ssh", "type"),
    ("ssh", "fingerprint"),
    ("ssh", "hassh"),
    ("ssh", "kex"),
    ("ssh", "kex", "kex_algorithms"),
    ("mongodb", "databases"),
    ("redis", "keys"),
    ("rsync", "modules"),
    ("location", "country_code"),
    ("location", "city"),
    ("location", "region_code"),
]
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4), max_leaves=12
)
_numbers = itertools.count(1)
_index: list[BannerIndex] = []


def index(tmp_path_factory) -> BannerIndex:
    if not _index:
        _index.append(BannerIndex(tmp_path_factory.mktemp("property")))
    return _index[0]


def put(banner: dict, path: tuple, value) -> None:
    here = banner
    for name in path[:-1]:
        if not isinstance(here.get(name), dict):
            here[name] = {}
        here = here[name]
    here[path[-1]] = value


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(MEMBERS), JSON), min_size=1, max_size=4))
def test_any_json_in_any_member_round_trips(tmp_path_factory, changes):
    idx = index(tmp_path_factory)
    n = next(_numbers)
    banner = real_banner(n)
    for path, value in changes:
        put(banner, path, value)
    address = banner["ip_str"] = f"198.20.{n // 256}.{n % 256}"
    line = json.dumps(banner).encode()
    chunk = prepare_lines(BannerIndex.prepare, [line])
    assert chunk.problems == [] and len(chunk.prepared) == 1
    with idx.writing() as writer:
        assert len(writer.add(chunk.prepared)) == 1
    (stored,) = idx.host(address)
    assert stored == json.loads(line)
    total, page, facets = idx.search(parse_strict(f"net:{address}/32"), parse_facets(",".join(FACETS)))
    assert total == 1 and page == [json.loads(line)]
    idx.count(parse_strict(f"{address} port:443"), parse_facets("asn,org,http.title,ssl.cert.serial"))
    for namespace in ("shodan", "intel"):
        shown = [for_namespace(b, namespace) for b in idx.host(address)]
        json_response(host_record(shown, history=True, minify=False))
        json_response([minified(b) for b in shown])
    assert [for_namespace(b, "shodan") for b in idx.host(address)] == [json.loads(line)]
    _, (body,), _ = idx.search_bodies(parse_strict(f"net:{address}/32"), [])
    assert body == line  # the stored bytes, exactly
    for namespace, minify in itertools.product(("shodan", "intel"), (True, False)):
        # the response's bytes (stored bytes where nothing changes) mean what shaping the banner gives
        expected = for_namespace(minified(json.loads(line)) if minify else json.loads(line), namespace)
        assert json.loads(served(body, namespace, minify)) == expected
