"""The backend, the import and `store init` on the ClickHouse store, through the CLI and over HTTP."""

from __future__ import annotations

import gzip

import orjson

from spyglass.cli import EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE, main
from spyglass.datagen import generate
from spyglass.server.clickhouse import ClickHouseStore
from tests.conftest import start_backend
from tests.store.conftest import database


def test_store_init_then_import_load_files_into_clickhouse(clickhouse_server, tmp_path, capsys, monkeypatch):
    url = clickhouse_server.address(database(tmp_path))
    assert main(["store", "init", "--store", url]) == EXIT_OK
    assert "tables ready, 0 banners" in capsys.readouterr().out
    path = tmp_path / "banners.json.gz"
    with gzip.open(path, "wb") as fh:
        for b in generate(300, seed=2):
            fh.write(orjson.dumps(b) + b"\n")
        fh.write(b"not json\n")
    monkeypatch.setenv("SPYGLASS_STORE", url)  # the environment names it as --store would
    assert main(["import", "--data", str(tmp_path / "unused"), str(path)]) == 1  # one bad line
    assert "300 new" in capsys.readouterr().err
    assert not (tmp_path / "unused" / "banners.db").exists()  # nothing went to an embedded store
    store = ClickHouseStore(url)
    assert store.total() == 300
    store.close()
    assert main(["import", str(path)]) == 1
    assert "0 new, 300 already there" in capsys.readouterr().err


def test_a_store_that_cannot_be_used_is_one_line_and_an_exit_code(tmp_path, capsys):
    unreachable = "clickhouse://user:secret@127.0.0.1:1/db"  # nothing listens on port 1
    for argv in (["store", "init", "--store", unreachable], ["serve", "--store", unreachable]):
        assert main([*argv, "--data", str(tmp_path)]) == EXIT_UNAVAILABLE
        err = capsys.readouterr().err
        assert "cannot use the banner store at clickhouse://user:***@127.0.0.1:1/db" in err
        assert "secret" not in err and len(err.strip().splitlines()) == 1
    assert main(["serve", "--store", "clickhouse://127.0.0.1/", "--data", str(tmp_path)]) == EXIT_USAGE
    assert "names no database" in capsys.readouterr().err
    assert main(["store", "init", "--data", str(tmp_path)]) == EXIT_USAGE


async def test_the_backend_on_clickhouse_serves_search_host_and_trends_to_the_client(clickhouse_server, tmp_path):
    from spyglass.client import Clients

    url = clickhouse_server.address(database(tmp_path))
    server, backend = start_backend(tmp_path / "data", store=url)
    assert isinstance(backend.app.state.banners, ClickHouseStore)
    with server:
        old = {
            "ip_str": "198.18.7.1",
            "port": 443,
            "transport": "tcp",
            "timestamp": "2026-01-05T00:00:00",
            "org": "Old Org",
        }
        new = {**old, "timestamp": "2026-03-05T00:00:00", "org": "New Org", "product": "nginx"}
        first = backend.collect([old, {**old, "port": 22}])
        assert [c.new_service for c in first] == [True, True]
        (again,) = backend.collect([new, old])  # the old one is there already
        assert again.new_service is False and again.banner == new
        async with Clients.from_profile(backend.profile(backend.key())) as c:
            found = await c.search.search("net:198.18.7.0/24 nginx", facets="org,port")
            assert found.total == 1 and found.matches[0].ip_str == "198.18.7.1"
            assert [(f.value, f.count) for f in found.facets["org"]] == [("New Org", 1)]
            counted = await c.search.count("net:198.18.7.0/24", facets="port")
            assert counted.total == 2 and {f.value for f in counted.facets["port"]} == {"22", "443"}
            host = await c.search.host("198.18.7.1", history=True)
            assert len(host.data) == 3
            trends = await c.trends.search("port:443", facets="org")
            assert [(m.month, m.count) for m in trends.matches] == [("2026-01", 1), ("2026-02", 0), ("2026-03", 1)]
    backend.store.close()


def test_store_copy_moves_an_embedded_data_dir_into_clickhouse_byte_for_byte(clickhouse_server, tmp_path, capsys):
    from spyglass.server.banners.seen import rows_of
    from spyglass.server.index import BannerIndex
    from spyglass.server.ingest.importer import import_banners

    data = tmp_path / "data"
    embedded = BannerIndex(data)
    import_banners(embedded, generate(1200, seed=4))
    up = {"ip_str": "192.0.2.9", "scan": "nmap-0123456789abcdef", "timestamp": "2026-01-01T00:00:00.000000"}
    closed = {"port": 22, "transport": "tcp", "state": "closed", "reason": "reset", "ttl": 64}
    kept = rows_of({**up, "state": "up", "reason": "echo-reply", "ttl": 64, "open": 0, "ports": [closed]}, "a.xml")
    assert embedded.add_seen(kept) == 2
    sent = {b for batch in embedded.added_since(0, 500) for b in embedded.raw_bodies([m for m, _ in batch]).values()}
    embedded.close()
    url = clickhouse_server.address(database(tmp_path))
    assert main(["store", "copy", "--data", str(data), "--store", url]) == EXIT_OK
    assert "1,200 banners copied, 0 were there already; 2 rows of hosts and ports scans saw copied" in (
        capsys.readouterr().err
    )
    store = ClickHouseStore(url)
    assert sorted(store.seen_of("192.0.2.9")) == sorted(kept)
    back = {b for batch in store.added_since(0, 500) for b in store.raw_bodies([m for m, _ in batch]).values()}
    assert back == sent and store.total() == 1200
    store.close()
    assert main(["store", "copy", "--data", str(data), "--store", url]) == EXIT_OK  # again: nothing twice
    assert "0 banners copied, 1,200 were there already" in capsys.readouterr().err
    assert main(["store", "copy", "--data", str(tmp_path / "none"), "--store", url]) == EXIT_USAGE
