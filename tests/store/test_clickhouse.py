"""The ClickHouse banner store beyond the contract: the servers, the cluster, the SQL compiler."""

from __future__ import annotations


def test_a_real_server_answers_on_loopback(clickhouse_server):
    assert clickhouse_server.port > 0
    assert clickhouse_server.query("SELECT version()")[0][0].startswith(("18.", "19.", "2"))


def test_the_cluster_lists_two_shards(clickhouse_cluster):
    rows = clickhouse_cluster.servers[0].query("SELECT shard_num, port FROM system.clusters WHERE cluster = 'spyglass'")
    assert sorted(rows) == [(1, clickhouse_cluster.servers[0].port), (2, clickhouse_cluster.servers[1].port)]


def test_without_the_server_the_tests_skip_saying_how_to_install_it_and_fail_in_ci(monkeypatch):
    import pytest

    from tests import clickhouse

    monkeypatch.setattr(clickhouse, "BINARY", "no-such-clickhouse-server")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y clickhouse-server"):
        clickhouse.binary()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="in CI"):
        clickhouse.binary()
