"""Bulk data of one service of two backends: each backend builds the files into its own data dir,
from the one ClickHouse banner store they share, so each lists the same files with the same bytes:
a banner collected through one is in the files of both, and a download begun on one resumes on the
other (the SHA-1 the client sends with ``If-Range`` is the same everywhere)."""

from __future__ import annotations

import gzip
import time

import httpx

from spyglass.testing.backend import serve
from tests.state.conftest import database
from tests.state.shared import state_key
from tests.state.test_stream_backends import banners, collect
from tests.store.conftest import clickhouse_server  # noqa: F401 (the fixture)

NS = "intel"


def listing(url: str, key: str) -> list[tuple[str, int, str]]:
    r = httpx.get(f"{url}/{NS}/data/daily", params={"key": key}, timeout=30)
    assert r.status_code == 200, r.text
    return sorted((f["name"], f["size"], f["sha1"]) for f in r.json())


def download(url: str, key: str, name: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.get(f"{url}/{NS}/data/daily/{name}", params={"key": key}, headers=headers, timeout=30)


def test_two_backends_list_the_same_files_with_the_same_bytes(clickhouse_server, postgres_url, tmp_path):  # noqa: F811
    store = clickhouse_server.address(database(tmp_path))
    key = state_key(postgres_url, tmp_path / "keys", collector=True)
    with (
        serve(tmp_path / "a", "--store", store, "--state", postgres_url) as a,
        serve(tmp_path / "b", "--store", store, "--state", postgres_url) as b,
    ):
        collect(a, key, banners(1, 5))  # 2026-02-01, through A only
        deadline = time.monotonic() + 60
        while not (on_a := listing(a, key)) or on_a != listing(b, key):
            assert time.monotonic() < deadline, (on_a, listing(b, key))
            time.sleep(0.2)
        assert [name for name, _, _ in on_a] == ["2026-02-01.json.gz"]
        name, size, _ = on_a[0]
        half = httpx.get(f"{a}/{NS}/data/daily/{name}", params={"key": key}, headers={"Range": f"bytes=0-{size // 2}"})
        rest = httpx.get(
            f"{b}/{NS}/data/daily/{name}", params={"key": key}, headers={"Range": f"bytes={size // 2 + 1}-"}
        )
        assert half.status_code == rest.status_code == 206
        whole = download(b, key, name, {}).content
        assert half.content + rest.content == whole and b"198.51.100.5" in gzip.decompress(whole)
