"""The embedded index's schema: how a banner's document (:mod:`spyglass.server.banners.fields`)
is held in tantivy.

The embedded index keeps the ``x_`` and ``f_`` fields of one value (EXACT_NAMES) as one ``e_``
field (:func:`in_index`): a term lower-cased for the filter, the value as shown in its fast column
for the facet, one field's work rather than two.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import tantivy

from spyglass.query import Facet
from spyglass.query.words import LONGEST
from spyglass.server.banners.fields import FACET_FIELDS, FILTER_FIELDS, MAX_TERM, document, memo
from spyglass.server.banners.shape import Shape
from spyglass.server.banners.store import TooManyValues

# x_NAME and f_NAME hold the same values (lower-cased, as shown): one e_NAME field in the index
EXACT_NAMES = frozenset(
    ("transport", "region", "version", "tag", "vuln", "ssh_fingerprint", "ssh_type", "ssh_hassh")
    + ("screenshot_label", "http_component", "http_component_category", "http_waf", "ssl_cert_fingerprint")
    + ("ssl_cert_serial", "ssl_version", "ssl_alpn", "ssl_jarm", "ssl_ja3s")
    + ("os_vendor", "os_family", "os_generation", "os_type")
)
# t_NAME and f_NAME hold one value (its words, as shown): one f_NAME field in the index, whose
# terms are the words and whose fast column is the value (cut at MAX_TERM, the words too)
WORDS_NAMES = frozenset(
    ("org", "isp", "os", "product", "city", "http_title", "ssl_cert_subject_cn", "ssl_cert_issuer_cn")
)
_IN_INDEX = {f"{kind}_{name}": f"e_{name}" for name in EXACT_NAMES for kind in "xf"} | {
    f"t_{name}": f"f_{name}" for name in WORDS_NAMES
}
_LEFT_OUT = tuple(f"t_{name}" for name in WORDS_NAMES)  # of document(), in the index
# Flags the index holds only when true (no facet counts them): false is their absence, which
# the compiler asks for (nearly every banner is IPv4, without TLS or vulnerabilities, and three
# terms less a banner are a noticeable share of tantivy's time).
TRUE_ONLY = ("b_has_ipv6", "b_has_ssl", "b_has_vuln")
# The tokenizers of e_ fields and of the f_ fields of WORDS_NAMES: the index holds the value
# lower-cased (a filter matches it whatever its case), or its words as the default tokenizer
# makes them; the fast column holds the value as shown (the facet).
EXACT, WORDS = "exact", "words"


def in_index(field: str) -> str:
    """The embedded index's field for a field of FILTER_FIELDS or FACET_FIELDS."""
    return _IN_INDEX.get(field, field)


def index_document(b: dict, shape: Shape) -> dict:
    """:func:`document` as the embedded index holds it (see :func:`in_index`)."""
    doc = document(b, shape, merged_exact, _cpes)
    for name in _LEFT_OUT:
        doc.pop(name, None)
    for name in TRUE_ONLY:
        if doc[name] is False:
            del doc[name]
    return doc


def document_tail(banner: dict, shape, service: int) -> bytes:
    """The banner's index document as JSON, less its opening brace (rowid and flag come first);
    ``service`` is its service's key (trends count services: trends.py)."""
    doc = index_document(banner, shape)
    doc["i_service"] = service
    try:
        return orjson.dumps(doc)[1:]
    except TypeError:  # a lone surrogate (wild banners hold them): U+FFFD in the index, kept in the body
        return orjson.dumps({name: _valid(value) for name, value in doc.items()})[1:]


def _valid(value: Any) -> Any:
    """A document's value (text, a number, a flag or a list of text) as valid Unicode."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, list):
        return [_valid(v) for v in value]
    return value


def exact_terms(text: str) -> list[str]:
    """The terms an ``e_`` field may hold for ``text`` whatever its case. Tantivy lower-cases letter by
    letter (Σ is always σ), Python with the final-sigma rule (ΟΔΟΣ is οδος): both forms."""
    low = text.lower()
    return [low, low.replace("ς", "σ")] if "ς" in low else [low]


def open_index(schema: tantivy.Schema, path: Path | None = None) -> tantivy.Index:
    """The index at ``path`` (made if missing; in memory without one), able to write ``e_`` fields:
    tokenizers live in the process, not in the index, so every opening registers them."""
    index = tantivy.Index(schema, path=None if path is None else str(path), reuse=True)
    index.register_tokenizer(
        EXACT, tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw()).filter(tantivy.Filter.lowercase()).build()
    )
    index.register_tokenizer(
        WORDS,
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(LONGEST))
        .filter(tantivy.Filter.lowercase())
        .build(),
    )
    for name in (EXACT, WORDS):
        index.register_fast_field_tokenizer(name, tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw()).build())
    return index


def build_schema() -> tantivy.Schema:
    """The embedded index's schema."""
    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("i_rowid", indexed=True, fast=True)
    sb.add_boolean_field("b_current", indexed=True, fast=True)
    # Filtered by range and ordered by its column alone: not indexed (near every value is another
    # term, which slowed the import, and a range over them is slower than the column).
    sb.add_date_field("timestamp", fast=True)
    # The address twice: ``ip`` for ranges (net:), ``f_ip`` as text for the ip facet (counting the
    # ip column instead is slower).
    sb.add_ip_addr_field("ip", indexed=True, fast=True)
    # The service's key (keys.py): trends count a month's services (trends.py) by its column, and
    # a tool's tag matches the services it ever found by its terms (compiler.py).
    sb.add_integer_field("i_service", indexed=True, fast=True)
    sb.add_text_field("text", index_option="position")
    facets = {in_index(f) for f in FACET_FIELDS.values()}
    names = {in_index(f) for f in FILTER_FIELDS.values()} | facets
    for name in sorted(names):
        if name.startswith("t_"):
            sb.add_text_field(name, index_option="position")
        elif name.startswith("x_"):
            sb.add_text_field(name, tokenizer_name="raw", index_option="basic")
        elif name.startswith("e_"):
            sb.add_text_field(name, tokenizer_name=EXACT, fast=True, index_option="basic")
        elif name[2:] in WORDS_NAMES:
            sb.add_text_field(name, tokenizer_name=WORDS, fast=True, index_option="position")
        elif name.startswith("f_"):
            sb.add_text_field(name, tokenizer_name="raw", fast=True, index_option="basic")
        elif name.startswith("i_"):
            sb.add_integer_field(name, indexed=True, fast=True)
        elif name.startswith("b_"):  # a column only for a facet (the has_* filters have none)
            sb.add_boolean_field(name, indexed=True, fast=name in facets)
    return sb.build()


def merged_exact(doc: dict, name: str, values: list[str]) -> None:
    """As the embedded index holds them: one ``e_`` field; one value as itself, not a list of one
    (tantivy reads it with one allocation less, a measurable share of its time per document)."""
    if len(values) == 1:
        value = values[0]
        doc["e_" + name] = value if len(value) <= MAX_TERM else value[:MAX_TERM]
    elif values:
        doc["e_" + name] = [v if len(v) <= MAX_TERM else v[:MAX_TERM] for v in values]


@memo
def _cpes(cpes: list[str]) -> list[str]:
    """Each CPE as the embedded index holds it (a cpe filter matches a leading part of it by a
    regular expression: compiler.py)."""
    return list({cpe.lower()[:MAX_TERM] for cpe in cpes})


# A bucket's services (trends count each service once a month): tantivy's HyperLogLog estimate,
# exact for a few dozen, within 5% of ClickHouse's exact count at 800 a month (test_clickhouse.py).
SERVICES = {"services": {"cardinality": {"field": "i_service"}}}


def facet_terms(numbered: Iterable[tuple[int, Facet]], shards: int = 1, services: bool = False) -> dict[str, dict]:
    """The tantivy aggregations counting each facet's largest values, named ``f{i}`` by its number.
    Over several shards each says more than the facet's size, so that a value that is second in
    every shard but first overall is still counted in each (index/merge.py). With ``services``
    each value's services are counted too (SERVICES), and the largest are those with the most."""
    spec = {}
    for i, f in numbered:
        terms: dict[str, Any] = {
            "field": in_index(FACET_FIELDS[f.name]),
            "size": f.size if shards == 1 else 2 * f.size + 10,
            "segment_size": max(10 * f.size, 1000),
        }
        spec[f"f{i}"] = {"terms": terms}
        if services:
            terms["order"] = {"services": "desc"}
            spec[f"f{i}"]["aggs"] = SERVICES
    return spec


_BUCKET_LIMIT = re.compile(r"bucket limit was exceeded\. Limit: (\d+)")


def aggregate(searcher: tantivy.Searcher, query: tantivy.Query, spec: dict) -> dict:
    """``searcher.aggregate``, with tantivy's cap on the values one answer counts (its bucket
    limit, a ValueError that was a 500 after seconds of work) said as TooManyValues (a 400)."""
    try:
        return searcher.aggregate(query, spec)
    except ValueError as exc:
        if (cap := _BUCKET_LIMIT.search(str(exc))) is None:
            raise
        raise TooManyValues(
            f"the facets asked for count more than {int(cap[1]):,} values in one answer, the index's cap:"
            " ask fewer facets or fewer values a facet"
        ) from None


def facet_value(bucket: dict[str, Any]) -> str:
    """A facet value as the seed shows it: always a string (ports, hashes, booleans too)."""
    key = bucket["key"]
    if bucket.get("key_as_string") in ("true", "false"):
        return bucket["key_as_string"]
    if isinstance(key, float) and key.is_integer():
        return str(int(key))
    return str(key)
