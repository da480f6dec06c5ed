"""A store an earlier version of spyglass made is upgraded by `spyglass store init`, every banner
kept to the byte. The earlier layout is written here as that version made it (git history of
server/clickhouse/tables.py before the change that dropped the x_ columns and the bodies' key and
month): a ReplacingMergeTree of banners partitioned by month with a column per index field, text
as it came, bodies by the banner's month."""

from __future__ import annotations

import json

import pytest
from clickhouse_driver import Client

from spyglass.cli import EXIT_OK, EXIT_UNAVAILABLE, main
from spyglass.query import parse_strict
from spyglass.server.banners.store import StoreUnavailable
from spyglass.server.clickhouse import ClickHouseStore
from spyglass.server.clickhouse.tables import prepare, time_of
from tests.store.conftest import database

_ARRAYS = {
    "Array(UInt8)": "b_has_ipv6 b_has_screenshot b_has_ssl b_has_vuln b_ssl_cert_expired",
    "Array(String)": "f_asn f_city f_country f_domain f_http_component f_http_component_category f_http_title "
    "f_http_waf f_ip f_isp f_mongodb_database_name f_org f_os f_product f_redis_key f_region f_rsync_module "
    "f_screenshot_label f_ssh_fingerprint f_ssh_hassh f_ssh_type f_ssl_alpn f_ssl_cert_fingerprint "
    "f_ssl_cert_issuer_cn f_ssl_cert_serial f_ssl_cert_subject_cn f_ssl_ja3s f_ssl_jarm f_ssl_version f_tag "
    "f_transport f_version f_vuln f_vuln_verified x_cpe x_domain x_hostname x_http_component "
    "x_http_component_category x_http_waf x_region x_scan x_screenshot_label x_ssh_fingerprint x_ssh_hassh "
    "x_ssh_type x_ssl_alpn x_ssl_cert_fingerprint x_ssl_cert_serial x_ssl_ja3s x_ssl_jarm x_ssl_version x_tag "
    "x_transport x_version x_vuln",
    "Array(Int64)": "i_hash i_http_favicon_hash i_http_html_hash i_http_robots_hash i_http_status",
    "String": "t_city t_http_securitytxt t_http_title t_isp t_org t_os t_product t_ssl t_ssl_cert_issuer_cn "
    "t_ssl_cert_subject_cn",
}
EARLIER_COLUMNS = {
    "banners": "key UInt64, service UInt64, mark UInt64, month UInt32, t Int64, ip FixedString(16), port UInt16, "
    "transport String, text String, "
    + ", ".join(f"{name} {type_}" for type_, names in _ARRAYS.items() for name in names.split()),
    "bodies": "mark UInt64, key UInt64, month UInt32, t Int64, body String",
    "demoted": "key UInt64",
    "meta": "name String, value String, at UInt64",
}
EARLIER_ENGINES = {
    "banners": "ReplacingMergeTree() PARTITION BY month ORDER BY (ip, port, transport, t, key)",
    "bodies": "ReplacingMergeTree() PARTITION BY month ORDER BY mark SETTINGS index_granularity = 64",
    "demoted": "Set",
    "meta": "ReplacingMergeTree(at) ORDER BY name",
}
EARLIER_SHARDING = {"banners": "key", "bodies": "key", "demoted": "key", "meta": "cityHash64(name)"}

BODIES = [  # (mark, the bytes as they came): the same service twice, odd members, words in capitals
    (
        1_700_000_000_000_001_000,
        b'{"ip_str":"198.18.30.1","port":22,"transport":"tcp","timestamp":"2026-01-01T00:00:00","data":"old"}',
    ),
    (
        1_700_000_000_000_002_000,
        b'{"ip_str":"198.18.30.1","port":22,"transport":"tcp","timestamp":"2026-02-01T00:00:00","data":"new"}',
    ),
    (
        1_700_000_000_000_003_000,
        b'{"ip_str":"198.18.30.2","port":443,"transport":"tcp","timestamp":"2026-01-02T03:04:05.123456",'
        b'"ssl":{"cert":{"serial":123456789012345678901234567890}},"z":1.0,"a":[]}',
    ),
    (
        1_700_000_000_000_004_000,
        b'{"ip_str":"198.18.30.3","port":80,"transport":"tcp","timestamp":"2026-01-05T00:00:00",'
        b'"data":"Welcome To NGINX"}',
    ),
    (
        1_700_000_000_000_005_000,
        b'{"port":8080,"ip_str":"198.18.30.4","transport":"tcp","timestamp":"2026-03-01T00:00:00"}',
    ),
]
STORED_TWICE = (1_700_000_000_000_006_000, BODIES[4][1])  # a copy whose row a merge dropped: its body stayed


def make_earlier_store(servers: list, name: str, cluster: str) -> None:
    """The earlier layout's tables with BODIES in them, as that version wrote them (on a cluster:
    local tables on each shard, Distributed tables over them, rows inserted through them)."""
    for server in servers:
        client = Client("127.0.0.1", port=server.port)
        client.execute(f"CREATE DATABASE {name}")
        for table, engine in EARLIER_ENGINES.items():
            local = f"{table}_local" if cluster and table != "demoted" else table
            client.execute(f"CREATE TABLE {name}.{local} ({EARLIER_COLUMNS[table]}) ENGINE = {engine}")
            if cluster:
                written = "demoted_shards" if table == "demoted" else table
                client.execute(
                    f"CREATE TABLE {name}.{written} ({EARLIER_COLUMNS[table]}) ENGINE = "
                    f"Distributed({cluster}, {name}, {local}, {EARLIER_SHARDING[table]})"
                )
    client = Client("127.0.0.1", port=servers[0].port, settings={"insert_distributed_sync": 1})
    bodies, rows = [], []
    for mark, body in [*BODIES, STORED_TWICE]:
        banner = json.loads(body)
        key, service = prepare(banner).key, prepare(banner).service
        t, month = time_of(prepare(banner).stamp)
        bodies.append((mark, key, month, t, body))
        rows.append((key, service, mark, month, t, b"\0" * 16, banner["port"], "tcp", json.dumps(banner)))
    client.execute(f"INSERT INTO {name}.bodies (mark, key, month, t, body) VALUES", bodies)
    client.execute(
        f"INSERT INTO {name}.banners (key, service, mark, month, t, ip, port, transport, text) VALUES", rows[:-1]
    )
    client.execute(f"INSERT INTO {name}.{'demoted_shards' if cluster else 'demoted'} (key) VALUES", [(rows[0][0],)])
    client.execute(f"INSERT INTO {name}.meta (name, value, at) VALUES", [("demo", "1", 1)])


@pytest.fixture(params=["clickhouse_server", "clickhouse_cluster"])
def earlier(request, tmp_path) -> str:
    """The address of a store of the earlier layout."""
    servers = request.getfixturevalue(request.param)
    name, cluster = database(tmp_path), ("spyglass" if request.param == "clickhouse_cluster" else "")
    make_earlier_store(getattr(servers, "servers", [servers]), name, cluster)
    return servers.address(name)


def test_store_init_upgrades_a_store_of_the_earlier_layout_keeping_every_banner(earlier, capsys):
    with pytest.raises(StoreUnavailable, match="run `spyglass store init --store .*` to upgrade the store"):
        ClickHouseStore(earlier)  # the backend, on start, says what to do
    assert main(["serve", "--store", earlier]) == EXIT_UNAVAILABLE

    assert main(["store", "init", "--store", earlier]) == EXIT_OK
    said = capsys.readouterr()
    assert "upgraded from an earlier layout: 5 banners copied" in said.err
    assert "1 stored twice kept once" in said.err and "tables ready, 5 banners" in said.out

    store = ClickHouseStore(earlier)
    assert store.raw_bodies([mark for mark, _ in BODIES]) == dict(BODIES)  # to the byte, under their marks
    assert [m for batch in store.added_since(0, 100) for m, _ in batch] == [mark for mark, _ in BODIES]
    total, found, _ = store.search(parse_strict("port:22"), [])
    assert total == 1 and found[0]["data"] == "new"  # the current banner of its service
    assert [b["data"] for b in store.host("198.18.30.1")] == ["new", "old"]  # the history
    assert store.count(parse_strict("net:198.18.30.0/24"), [])[0] == 4 and store.total() == 5
    assert store.count(parse_strict("welcome nginx"), [])[0] == 1  # its words as this version matches them
    assert store.host("198.18.30.2") == [json.loads(BODIES[2][1])]
    assert store.get_meta("demo") == "1"
    with store.writing() as writer:  # what it holds is known: nothing is added twice
        assert writer.add([store.prepare(json.loads(body), body) for _, body in BODIES]) == []
    store.close()

    assert main(["store", "init", "--store", earlier]) == EXIT_OK  # once upgraded, there is nothing to do
    said = capsys.readouterr()
    assert "upgraded" not in said.err and "tables ready, 5 banners" in said.out


def test_an_upgrade_cut_short_is_refused_until_store_init_runs_again(earlier, capsys, monkeypatch):
    from spyglass.server.clickhouse import tables, upgrade

    def cut(store, *args):
        store.connection.insert("bodies", tables.BODY_COLUMNS, b"")  # part way
        raise ConnectionResetError("the connection dropped")

    monkeypatch.setattr(upgrade, "_copy", cut)
    assert main(["store", "init", "--store", earlier]) == EXIT_UNAVAILABLE
    assert "the connection dropped" in capsys.readouterr().err
    with pytest.raises(StoreUnavailable, match="an upgrade of the store was cut short .* again to finish it"):
        ClickHouseStore(earlier)
    monkeypatch.undo()
    assert main(["store", "init", "--store", earlier]) == EXIT_OK
    assert "5 banners copied" in capsys.readouterr().err
    store = ClickHouseStore(earlier)
    assert store.raw_bodies([mark for mark, _ in BODIES]) == dict(BODIES) and store.total() == 5
    store.close()


def test_a_store_whose_banners_were_a_replacing_merge_tree_is_upgraded_too(clickhouse_server, tmp_path, capsys):
    """The layout before racing writers were reconciled: the same columns, banners a
    ReplacingMergeTree (whose merges dropped a copy and left its body behind)."""
    from spyglass.server.clickhouse import tables

    name = database(tmp_path)
    url = clickhouse_server.address(name)
    clickhouse_server.query(f"CREATE DATABASE {name}")
    for table, engine in tables.ENGINES.items():
        engine = engine.replace("MergeTree()", "ReplacingMergeTree()") if table == "banners" else engine
        clickhouse_server.query(f"CREATE TABLE {name}.{table} ({tables.TABLE_COLUMNS[table]}) ENGINE = {engine}")
    earlier = ClickHouseStore(url, init=False)
    with earlier.writing() as writer:
        writer.add([earlier.prepare(json.loads(body), body) for _, body in BODIES])
    sent = {
        m: body
        for batch in earlier.added_since(0, 100)
        for m, body in earlier.raw_bodies([m for m, _ in batch]).items()
    }
    earlier.close()
    with pytest.raises(StoreUnavailable, match=f"{name}.banners was made by an earlier version"):
        ClickHouseStore(url)

    assert main(["store", "init", "--store", url]) == EXIT_OK
    assert "5 banners copied" in capsys.readouterr().err
    store = ClickHouseStore(url)
    assert store.raw_bodies(list(sent)) == sent and store.total() == 5
    assert [b["data"] for b in store.search(parse_strict("port:22"), [])[1]] == ["new"]
    store.close()


def test_a_store_whose_bodies_kept_their_time_is_upgraded_and_still_says_what_was_added(
    clickhouse_cluster, tmp_path, capsys
):
    """Layout 3: the tables of today but for a time column in ``bodies`` (the bulk-data builder
    now reads the times from ``banners``)."""
    name = database(tmp_path)
    url = clickhouse_cluster.address(name)
    earlier = ClickHouseStore(url)
    with earlier.writing() as writer:
        writer.add([earlier.prepare(json.loads(body), body) for _, body in BODIES])
    sent = [row for batch in earlier.added_since(0, 2) for row in batch]
    earlier.close()
    for server in clickhouse_cluster.servers:
        server.query(f"ALTER TABLE {name}.bodies_local ADD COLUMN t Int64")
    with pytest.raises(StoreUnavailable, match=f"{name}.bodies_local was made by an earlier version"):
        ClickHouseStore(url)

    assert main(["store", "init", "--store", url]) == EXIT_OK
    assert "5 banners copied" in capsys.readouterr().err
    store = ClickHouseStore(url)
    assert [row for batch in store.added_since(0, 2) for row in batch] == sent  # marks and times, as before
    assert sorted(store.raw_bodies([m for m, _ in sent]).values()) == sorted(body for _, body in BODIES)
    store.close()


def test_bodies_that_cannot_be_read_are_kept_aside_and_said(clickhouse_server, tmp_path, capsys):
    name = database(tmp_path)
    make_earlier_store([clickhouse_server], name, "")
    bad = b'{"port": 1, "data": "no address, no time"}'
    Client("127.0.0.1", port=clickhouse_server.port).execute(
        f"INSERT INTO {name}.bodies (mark, key, month, t, body) VALUES",
        [(1_700_000_000_000_009_000, 1, 202601, 0, bad)],
    )
    url = clickhouse_server.address(name)
    assert main(["store", "init", "--store", url]) == EXIT_OK
    err = capsys.readouterr().err
    assert "5 banners copied" in err
    assert f"1 could not be read (not JSON, or no address, port or time): they stay in {name}.bodies_unread" in err
    assert clickhouse_server.query(f"SELECT body FROM {name}.bodies_unread") == [(bad.decode(),)]
    store = ClickHouseStore(url)  # the store serves
    assert store.total() == 5
    store.close()


def test_a_store_whose_rows_are_of_an_earlier_layout_note_is_upgraded(clickhouse_cluster, tmp_path, capsys):
    """Tables as today's, rows made by a version whose keys or columns' contents differed (its
    layout note in meta older): refused, then made again from the bodies by store init."""
    url = clickhouse_cluster.address(database(tmp_path))
    store = ClickHouseStore(url)
    with store.writing() as writer:
        writer.add([store.prepare(json.loads(body), body) for _, body in BODIES])
    sent = {
        m: body for batch in store.added_since(0, 100) for m, body in store.raw_bodies([m for m, _ in batch]).items()
    }
    store.set_meta("layout", "1")
    store.close()
    with pytest.raises(StoreUnavailable, match="rows of layout 1, this version's are .*run `spyglass store init"):
        ClickHouseStore(url)

    assert main(["store", "init", "--store", url]) == EXIT_OK
    assert "5 banners copied" in capsys.readouterr().err
    store = ClickHouseStore(url)
    assert store.raw_bodies(list(sent)) == sent and store.total() == 5
    assert store.count(parse_strict("net:198.18.30.0/24"), [])[0] == 4
    store.close()


@pytest.mark.parametrize("servers", ["clickhouse_server", "clickhouse_cluster"])
def test_a_store_made_before_os_classes_were_columns_is_upgraded_and_finds_them(request, servers, tmp_path, capsys):
    """Issue 46: the columns of nmap -O's OS classes are new. A store whose tables lack them (its
    current rows' too) is refused, and store init makes its rows again from the bodies: classes a
    body held are found."""
    found = request.getfixturevalue(servers)
    cluster = servers == "clickhouse_cluster"
    name = database(tmp_path)
    url = found.address(name)
    earlier = ClickHouseStore(url)
    classes = [{"vendor": "Linux", "family": "Linux", "generation": "5.X", "type": "general purpose", "accuracy": 98}]
    body = json.dumps({**json.loads(BODIES[3][1]), "os_classes": classes}).encode()
    with earlier.writing() as writer:
        writer.add([earlier.prepare(json.loads(b), b) for b in [*(b for _, b in BODIES[:3]), body]])
    earlier.close()
    for server in getattr(found, "servers", [found]):
        for table in ("banners", "current", *(("banners_local", "current_local") if cluster else ())):
            for column in ("f_os_vendor", "f_os_family", "f_os_generation", "f_os_type", "i_os_accuracy"):
                server.query(f"ALTER TABLE {name}.{table} DROP COLUMN {column}")
    with pytest.raises(StoreUnavailable, match=f"{name}.banners.* was made by an earlier version"):
        ClickHouseStore(url)

    assert main(["store", "init", "--store", url]) == EXIT_OK
    assert "4 banners copied" in capsys.readouterr().err
    store = ClickHouseStore(url)
    for query in ("os.vendor:linux", "os.generation:5.x", 'os.type:"general purpose"', "os.accuracy:98"):
        assert [b["ip_str"] for b in store.search(parse_strict(query), [])[1]] == ["198.18.30.3"], query
    assert store.count(parse_strict("port:22"), [])[0] == 1 and store.total() == 4
    store.close()
