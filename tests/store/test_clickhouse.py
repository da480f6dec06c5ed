"""The ClickHouse banner store beyond the contract: the servers, the cluster, the SQL compiler."""

from __future__ import annotations

import socket
from dataclasses import replace

import pytest

from spyglass.datagen import generate
from spyglass.query import FACETS, FILTER_EXAMPLES, Filter, Query, Text, parse_facets, parse_strict
from spyglass.server.banners.store import StoreUnavailable
from spyglass.server.clickhouse import ClickHouseStore, StoreURLError, tables
from spyglass.server.clickhouse.compiler import Sql, where
from spyglass.server.clickhouse.connection import Connection, parse_url
from spyglass.server.clickhouse.upgrade import upgrade
from spyglass.server.index import BannerIndex
from spyglass.server.ingest.importer import import_banners
from spyglass.server.runner import DEMO_BANNERS
from spyglass.testing.clickhouse import current_engine_store
from tests.servers import installed
from tests.store.conftest import database


def test_a_real_server_answers_on_loopback(clickhouse_server):
    assert clickhouse_server.port > 0
    assert clickhouse_server.query("SELECT version()")[0][0].startswith(("18.", "19.", "2"))


def test_the_cluster_lists_two_shards(clickhouse_cluster):
    rows = clickhouse_cluster.servers[0].query("SELECT shard_num, port FROM system.clusters WHERE cluster = 'spyglass'")
    assert sorted(rows) == [(1, clickhouse_cluster.servers[0].port), (2, clickhouse_cluster.servers[1].port)]


def test_without_the_server_the_tests_skip_saying_how_to_install_it_and_fail_in_ci(monkeypatch):
    from spyglass.testing import clickhouse

    monkeypatch.setattr(clickhouse, "BINARY", "no-such-clickhouse-server")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y clickhouse-server"), installed():
        clickhouse.binary()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="in CI"), installed():
        clickhouse.binary()


# -- the compiler: the same answers as the embedded store, values only as parameters ---------------


@pytest.fixture(scope="module")
def both(tmp_path_factory, clickhouse_server):
    """The demo data in the embedded store and in ClickHouse."""
    embedded = BannerIndex(tmp_path_factory.mktemp("embedded"))
    clickhouse = ClickHouseStore(clickhouse_server.address("compiler"))
    for store in (embedded, clickhouse):
        import_banners(store, generate(DEMO_BANNERS, seed=1))
    yield embedded, clickhouse
    embedded.close()
    clickhouse.close()


FREE_TEXT = [
    "nginx",
    '"welcome to nginx"',
    "openssh port:22",
    "-nginx port:80",
    "Nginx has_ssl:true",
    '"to nginx welcome"',
]


@pytest.mark.parametrize("query", [*sorted(FILTER_EXAMPLES.values()), *FREE_TEXT])
def test_every_filter_and_free_text_finds_what_the_embedded_store_finds(both, query):
    embedded, clickhouse = both
    for q in (query, f"-{query}" if not query.startswith("-") else query[1:]):
        parsed = parse_strict(q)
        assert clickhouse.count(parsed, [])[0] == embedded.count(parsed, [])[0], q
        exact, estimated = clickhouse.trends(parsed, []).matches, embedded.trends(parsed, []).matches
        assert [m["month"] for m in exact] == [m["month"] for m in estimated], q
        for a, b in zip(exact, estimated, strict=True):  # services a month: tantivy's is an estimate
            assert abs(a["count"] - b["count"]) <= 1 + 0.05 * a["count"], (q, a, b)


def test_every_facet_counts_what_the_embedded_store_counts(both):
    embedded, clickhouse = both
    query, facets = (
        parse_strict("port:22,80,443,3389,6379,27017,873"),
        parse_facets(",".join(f"{f}:1000" for f in FACETS)),
    )
    _, ours = clickhouse.count(query, facets)
    _, theirs = embedded.count(query, facets)
    for name in FACETS:
        assert sorted(ours[name], key=str) == sorted(theirs[name], key=str), name


HOSTILE = [
    "x'); DROP TABLE banners; --",
    "back\\slash\\' quote",
    "%(p0)s %s {0} ?",
    "line\nbreak\ttab\x00nul",
    "ünïcødé ' \u2028 '",
]


def test_regular_expressions_are_asked_only_of_rows_the_rest_let_through():
    """18.16 evaluates a whole PREWHERE for every row: the expressions go to WHERE, and what each
    word needs (its bytes, or its token where the server indexes them) to PREWHERE."""
    query = parse_strict('nginx "welcome to" title:login -apache port:22')
    cheap, costly = where(Sql(), query)
    assert "match(" not in cheap and cheap.count("position(") == 4 and "port IN" in cheap
    assert costly.count("match(") == 4 and costly.count("NOT (") == 1 and "port" not in costly
    indexed, _ = where(Sql(), query, tokens=True)
    assert indexed.count("hasToken(") == 3 and indexed.count("position(") == 1  # the title has no token index
    assert where(Sql(), parse_strict("port:22")) == ("port IN %(p0)s", "1")


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_are_parameters_never_sql(clickhouse_server, tmp_path, value):
    store = ClickHouseStore(clickhouse_server.address(database(tmp_path)))
    import_banners(store, [banner_with_tag(value), banner_with_tag("plain", ip="198.18.9.2")])
    query = Query(f"tag:{value}", [Filter("tag", (value.lower(),))])
    sql = Sql()
    condition = " AND ".join(where(sql, query))
    assert value.lower() not in condition and "'" not in condition  # only placeholders in the SQL
    total, matches, facets = store.search(query, parse_facets("tag"))
    assert total == 1 and matches[0]["tags"] == [value]
    assert facets["tag"] == [{"count": 1, "value": value}]
    negated = Query(f"-tag:{value}", [Filter("tag", (value.lower(),), negated=True)])
    assert store.count(negated, [])[0] == 1 and store.total() == 2  # the tables are still there
    for term in (Text(value), Text(value, phrase=True), Filter("title", (value,))):  # words: cheap and costly parts
        cheap, costly = where(Sql(), Query(value, [term]))
        assert "'" not in cheap + costly
        counted = store.count(Query(value, [term]), parse_facets("org,country"))[0]
        against = replace(term, negated=True)
        assert counted + store.count(Query(value, [against]), parse_facets("tag"))[0] == 2
        assert store.trends(Query(value, [term]), parse_facets("country")).total == counted  # no history here
    store.close()


def banner_with_tag(tag: str, ip: str = "198.18.9.1") -> dict:
    return {"ip_str": ip, "port": 80, "transport": "tcp", "timestamp": "2026-01-01T00:00:00", "tags": [tag]}


# -- the cluster -----------------------------------------------------------------------------------


def test_inserts_are_spread_across_the_shards(clickhouse_cluster, tmp_path):
    store = ClickHouseStore(clickhouse_cluster.address(database(tmp_path)))
    import_banners(store, generate(400, seed=5))
    per_shard = [
        server.query(f"SELECT count() FROM {database(tmp_path)}.banners_local")[0][0]
        for server in clickhouse_cluster.servers
    ]
    assert sum(per_shard) == 400 == store.total() and min(per_shard) > 100
    store.close()


def test_a_cluster_that_the_server_does_not_know_is_refused(clickhouse_server):
    with pytest.raises(StoreURLError, match="no cluster 'nowhere'"):
        ClickHouseStore(clickhouse_server.address("x", "nowhere"))


@pytest.mark.parametrize(
    "url",
    [
        "postgres://h/db",
        "clickhouse://127.0.0.1:9000",
        "clickhouse://h/db;drop",
        "clickhouse://h/db?cluster=a'b",
        "clickhouse://h/db?http_port=80;x",
        "clickhouse://h/db?http_port=70000",
    ],
)
def test_addresses_that_cannot_be_used_say_why(url):
    with pytest.raises(StoreURLError):
        parse_url(url)


@pytest.mark.parametrize("host", ["127.0.0.1", "[::1]"])
def test_an_insert_whose_http_port_does_not_answer_says_so(host):
    """Nothing listens on port 1: the store says it cannot reach the server over HTTP, for an IPv6
    address too (bracketed in the URL it posts to)."""
    connection = Connection(f"clickhouse://u:secret@{host}:1/db?http_port=1")
    with pytest.raises(StoreUnavailable, match=r"u:\*\*\*@.* cannot be reached over HTTP \(http_port 1\)"):
        connection.insert("banners", ["key"], b"")
    connection.close()


def test_a_banner_without_its_required_members_is_refused_by_the_clickhouse_store_too():
    from spyglass.server.banners.shape import BadBanner

    for missing in ("ip_str", "port", "timestamp"):
        b = banner_with_tag("x")
        del b[missing]
        with pytest.raises(BadBanner):
            ClickHouseStore.prepare(b)


def test_the_http_port_is_8123_unless_the_address_names_another():
    assert parse_url("clickhouse://h/db")["http_port"] == 8123
    assert parse_url("clickhouse://h:9440/db?http_port=8443&cluster=c")["http_port"] == 8443


def test_a_writer_that_cannot_reach_the_http_port_says_so(clickhouse_server, tmp_path):
    with socket.socket() as free:  # a port nothing listens on once closed
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    url = clickhouse_server.address(database(tmp_path)).replace(
        f"http_port={clickhouse_server.http_port}", f"http_port={port}"
    )
    store = ClickHouseStore(url)
    with pytest.raises(StoreUnavailable, match=f"cannot be reached over HTTP \\(http_port {port}\\)"):
        import_banners(store, [banner_with_tag("x")])
    assert store.total() == 0
    store.close()


def test_tables_of_another_version_are_named_not_written_into(clickhouse_server, tmp_path):
    name = database(tmp_path)
    clickhouse_server.query(f"CREATE DATABASE {name}")
    clickhouse_server.query(
        f"CREATE TABLE {name}.banners (key UInt64, x_tag Array(String)) ENGINE = MergeTree ORDER BY key"
    )
    with pytest.raises(StoreUnavailable, match=f"{name}.banners was made by an earlier version of spyglass: run"):
        ClickHouseStore(clickhouse_server.address(name))
    with pytest.raises(StoreUnavailable, match=f"{name}.bodies on .* is of no layout this version of spyglass can"):
        upgrade(clickhouse_server.address(name))  # no bodies to copy from: nothing is moved
    assert clickhouse_server.query(f"SELECT count() FROM {name}.banners") == [(0,)]


def test_a_search_is_three_queries_and_trends_two(both, monkeypatch):
    """The total and every facet in one pass; the page's marks, then their bodies named by mark (a
    query costs the server several ms however small, but a subquery's marks would have it read the
    whole mark column of the bodies); trends: the count of banners and the facets by month."""
    _, clickhouse = both
    sent: list[str] = []
    connection = clickhouse.connection
    execute = connection.execute
    monkeypatch.setattr(connection, "execute", lambda sql, *a, **k: sent.append(sql) or execute(sql, *a, **k))
    total, page, facets = clickhouse.search(parse_strict("port:22,80"), parse_facets("port,org,country,product,vuln"))
    assert len(sent) == 3 and total > len(page) > 0 and all(facets.values())
    assert "FROM bodies WHERE mark IN" in sent[-1]
    clickhouse.trends(parse_strict("port:22"), [])  # the store's months: read again only when its count changes
    sent.clear()
    clickhouse.trends(parse_strict("port:22,80"), parse_facets("country,port"))
    assert len(sent) == 2 and not any("min(month)" in sql for sql in sent)


def test_of_two_banners_of_a_service_at_one_time_search_and_current_agree(clickhouse_server, tmp_path):
    """Of two banners of a service at one time the current one is that of the larger key, whatever
    the order they came in (an order of the banners themselves, so that racing writers agree), and
    search and ``current`` read the same one."""
    first, second = (dict(banner_with_tag("x"), port=443, hash=h) for h in (1, 2))
    others = [dict(banner_with_tag("y", ip=f"198.18.9.{i}"), port=port) for i, port in enumerate((80, 22, 8080), 2)]
    winner = max((first, second), key=lambda b: ClickHouseStore.prepare(b).key)["hash"]
    for order in ((first, second), (second, first)):
        store = ClickHouseStore(clickhouse_server.address(database(tmp_path / str(order[0]["hash"]))))
        import_banners(store, [others[0], order[0], others[1], order[1], others[2]])
        _, found, _ = store.search(parse_strict("port:443"), [])
        assert [b["hash"] for b in found] == [winner] and store.current("198.18.9.1", 443, "tcp")["hash"] == winner
        store.close()


# -- the current rows: what search, count and facets read --------------------------------------------


@pytest.fixture(params=["clickhouse_server", "clickhouse_cluster"])
def servers(request) -> list:
    """The servers holding local tables, and the address of a store over them (a database per test)."""
    found = request.getfixturevalue(request.param)
    return found.servers if request.param == "clickhouse_cluster" else [found]


def address_on(servers: list, name: str) -> str:
    return servers[0].address(name, "spyglass" if len(servers) > 1 else "")


def local(servers: list, table: str) -> str:
    return f"{table}_local" if len(servers) > 1 else table


def seen_again(services: int, rounds: int) -> list[list[dict]]:
    """What writers add one after another: each service seen once a round, newer each round, and
    with each round after the first one banner older than any (history that arrives late)."""
    out = []
    for r in range(rounds):
        batch = [
            {**banner_with_tag(f"r{r}", ip=f"198.18.30.{s}"), "timestamp": f"2026-02-0{r + 2}T00:00:00"}
            for s in range(services)
        ]
        if r:
            batch.append({**banner_with_tag("late", ip=f"198.18.30.{r}"), "timestamp": "2025-01-01T00:00:00"})
        out.append(batch)
    return out


def test_merges_leave_one_current_row_a_service(servers, tmp_path, monkeypatch):
    """A banner's row in current is cancelled when a newer one of its service comes (in the same
    flush, a later one, or by a later writer), so that once merged the table holds only the current
    banners: what search reads shrinks to the services, however long their history."""
    from spyglass.server.clickhouse import writer as clickhouse_writer

    name = database(tmp_path)
    monkeypatch.setattr(clickhouse_writer, "FLUSH_ROWS", 7)  # flushes part way through each writer's batch
    store = ClickHouseStore(address_on(servers, name))
    rounds = seen_again(services=20, rounds=4)
    for batch in rounds[:2]:
        import_banners(store, batch)
    import_banners(store, [b for batch in rounds[2:] for b in batch])  # two rounds in one writer
    assert store.total() == sum(map(len, rounds))
    assert store.count(parse_strict("net:198.18.30.0/24"), [])[0] == 20
    assert {b["tags"][0] for b in store.search(parse_strict("net:198.18.30.0/24"), [])[1]} == {"r3"}
    for server in servers:
        server.query(f"OPTIMIZE TABLE {name}.{local(servers, 'current')} FINAL")
    rows = sum(server.query(f"SELECT count() FROM {name}.{local(servers, 'current')}")[0][0] for server in servers)
    assert rows == 20
    store.close()


def test_a_store_made_before_the_current_rows_gets_them_when_opened(servers, tmp_path):
    name = database(tmp_path)
    store = ClickHouseStore(address_on(servers, name))
    for batch in seen_again(services=10, rounds=3):
        import_banners(store, batch)
    before = store.search(parse_strict("tag:r2"), parse_facets("tag"))
    store.close()
    for server in servers:  # as an earlier version left it: no current rows
        for table in {"current", local(servers, "current")}:
            server.query(f"DROP TABLE {name}.{table}")
    store = ClickHouseStore(address_on(servers, name))
    assert store.search(parse_strict("tag:r2"), parse_facets("tag")) == before
    assert before[0] == 10 and store.count(parse_strict("tag:r0"), [])[0] == 0
    assert store.current("198.18.30.4", 80, "tcp")["tags"] == ["r2"]
    store.close()


def test_what_a_writer_stopped_between_its_inserts_left_store_init_puts_right(servers, tmp_path, monkeypatch, capsys):
    """The server went away after a writer stored its banners and before their current rows and
    demotions: they are not searchable, and their services have two banners not demoted, until
    `store init` reconciles every service."""
    from spyglass.cli import EXIT_OK, main

    url = address_on(servers, database(tmp_path))
    store = ClickHouseStore(url)
    first, second = seen_again(services=10, rounds=2)
    import_banners(store, first)
    real = store.connection.insert

    def gone_before_current(table: str, columns: list[str], rows: bytes) -> None:
        if table == "current":
            raise StoreUnavailable("the server went away")
        real(table, columns, rows)

    monkeypatch.setattr(store.connection, "insert", gone_before_current)
    with pytest.raises(StoreUnavailable):
        import_banners(store, second)
    monkeypatch.undo()
    monkeypatch.setattr("spyglass.server.clickhouse.writer.REPAIR_ROWS", 3)  # the repair in 4 slices of keys
    net = parse_strict("net:198.18.30.0/24")
    assert store.total() == 21 and {b["tags"][0] for b in store.search(net, [])[1]} == {"r0"}

    assert main(["store", "init", "--store", url]) == EXIT_OK
    # each service's r0 banner demoted, and the late one (older than r0) too
    assert "tables ready, 21 banners; put right: 11 demoted, 0 copies deleted" in capsys.readouterr().out
    total, found, _ = store.search(net, [])
    assert total == 10 and [b["tags"][0] for b in found] == ["r1"] * 10
    assert store.repair() == (0, 0) and store.count(net, [])[0] == 10  # put right once: nothing left to do
    store.close()


def test_free_text_reads_the_text_index_where_the_server_has_one(current_engine, clickhouse_server, tmp_path):
    """On today's ClickHouse (26.x) the store's tables index the free text's words and a free text
    query skips the granules without its words; 18.16 has no such index and reads every row."""
    store = current_engine_store(current_engine, database(tmp_path))
    old = ClickHouseStore(clickhouse_server.address(database(tmp_path)))
    assert store.tokens and not old.tokens
    banners = [*generate(20_000, seed=5), {**next(iter(generate(1, seed=6))), "data": "Gate to Zanzibar\u2014north"}]
    for each in (store, old):
        with each.writing() as writer:
            writer.add([each.prepare(b) for b in banners])
    for table in ("banners", "current"):
        (made,) = current_engine.run(f"SHOW CREATE TABLE {table}", store.database, raw=True)[0]
        assert b"INDEX words replaceRegexpAll(text" in made
    sql = Sql()
    condition = " AND ".join(where(sql, parse_strict("zanzibar"), tokens=True))
    plan = current_engine.run(
        f"EXPLAIN indexes = 1 SELECT count() FROM banners WHERE {condition}", store.database, sql.params
    )
    skipped = "\n".join(line for (line,) in plan).split("Name: words", 1)[1]
    read, total = (int(n) for n in skipped.split("Granules: ", 1)[1].split()[0].split("/"))
    assert read < total  # 20,001 banners are 3 granules: 1 has the word
    assert store.count(parse_strict("zanzibar"), [])[0] == old.count(parse_strict("zanzibar"), [])[0] == 1
    assert store.count(parse_strict('"gate to zanzibar"'), [])[0] == 1
    store.close()
    old.close()


def test_a_store_made_before_its_server_had_text_indexes_gets_the_index_when_opened(current_engine, tmp_path):
    name = database(tmp_path)
    current_engine.run(f"CREATE DATABASE {name}", "")
    for table in tables.ENGINES:  # as a store made on 18.16 has them
        current_engine.run(tables.create_local(name, table, ""), name)
    with current_engine_store(current_engine, name).writing() as writer:
        writer.add([tables.prepare(b) for b in generate(50, seed=8)])
    for table in ("banners", "current"):
        (made,) = current_engine.run(f"SHOW CREATE TABLE {table}", name, raw=True)[0]
        assert b"INDEX words" in made


def test_a_field_with_a_plain_column_never_holds_more_than_one_value():
    """compiler.SCALAR: the fields document() gives one value or none, whatever a banner's members
    hold (a list, an object, a number where text is usual), and the flags every banner has."""
    from spyglass.server.banners.fields import document
    from spyglass.server.banners.shape import BadBanner, normalize
    from spyglass.server.clickhouse.compiler import SCALAR
    from spyglass.server.clickhouse.tables import _shown_exact

    odd = {"a": [1, "x"], "b": {"k": "v"}, "c": 7, "d": None, "e": True, "f": ""}
    hostile = [
        {**b, name: value}
        for b in generate(40, seed=9)
        for name in ("org", "isp", "os", "product", "asn", "location", "http", "ssl", "ip_str", "_shodan")
        for value in odd.values()
    ]
    scans = [
        {**b, "_shodan": {"crawler": "c", "options": {"scan": v}}} for b in generate(5) for v in [*odd.values(), "S"]
    ]
    seen: set[str] = set()
    for b in [*generate(2_000, seed=10), *hostile, *scans]:
        try:
            doc = document(b, normalize(b), _shown_exact)
        except BadBanner:
            continue
        for name in SCALAR & set(doc):
            assert isinstance(doc[name], str if name[0] in "fx" else bool) and doc[name] != "", (name, b)
            seen.add(name)
    assert {"f_org", "f_country", "f_ip", "f_http_title", "b_has_vuln", "x_scan"} <= seen
    assert SCALAR <= {name for name, type_ in tables.COLUMNS if type_ in ("String", "UInt8")}
