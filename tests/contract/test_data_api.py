"""Bulk data: the client against the backend under uvicorn, whose datasets are produced from its
real index; files download with range requests, resume, and have their SHA-1 checked."""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
import time
from collections import Counter
from datetime import datetime

import httpx
import orjson
import pytest

import spyglass.client.data as client_data
import spyglass.server.routers.data as server_data
from spyglass.client import Clients, Forbidden, NotFound
from spyglass.client.data import ChecksumMismatch, part_path
from spyglass.datagen import generate
from spyglass.models import Dataset, DatasetFile
from tests.conftest import ORIGINAL, backend_with

BANNERS = list(generate(1500, seed=11))


def day(banner: dict) -> str:
    return banner["timestamp"][:10]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    # The backend's clock in the month after the banners collected below: the day and the month
    # under way are listed once they end, and these tests must not depend on today's date.
    after = datetime(2026, 12, 15, 12, 0, 0)
    with backend_with(tmp_path_factory.mktemp("data-backend"), BANNERS, clock=lambda: after) as backend:
        yield backend


@pytest.fixture
async def enterprise(loaded):
    async with Clients.from_profile(loaded.profile(loaded.key("enterprise"))) as clients:
        yield clients


def settle(backend, timeout: float = 60.0) -> None:
    service = backend.app.state.datasets
    deadline = time.monotonic() + timeout
    while service.behind():
        assert time.monotonic() < deadline, "the dataset files did not catch up"
        service.wake()
        time.sleep(0.05)


def fetch(url: str, key: str, **headers: str) -> httpx.Response:
    return httpx.get(url, params={"key": key}, headers=headers, timeout=30)


@pytest.mark.parametrize("plan", ["free", "member"])
async def test_bulk_data_is_enterprise_only(loaded, plan):
    settle(loaded)
    files = list(loaded.app.state.datasets.files("daily"))
    async with Clients.from_profile(loaded.profile(loaded.key(plan))) as c:
        with pytest.raises(Forbidden, match="enterprise"):
            await c.data.datasets()
        with pytest.raises(Forbidden, match="enterprise"):
            await c.data.files("daily")
        url = f"{loaded.url}/intel/data/daily/{files[0].name}"
        answer = fetch(url, c.transport._key)
        assert answer.status_code == 403 and "enterprise" in answer.json()["error"]


async def test_datasets_are_daily_and_monthly(enterprise):
    listed = await enterprise.data.datasets()
    assert {(d.name, d.scope) for d in listed} == {("daily", "daily"), ("monthly", "monthly")}
    assert all(d.description for d in listed)


async def test_files_hold_every_banner_once_by_day_and_by_month(loaded, enterprise):
    settle(loaded)
    for dataset, length in (("daily", 10), ("monthly", 7)):
        files = await enterprise.data.files(dataset)
        assert [f.name for f in files] == sorted({b["timestamp"][:length] + ".json.gz" for b in BANNERS}, reverse=True)
        seen: Counter = Counter()
        for f in files[:3] + files[-2:]:  # newest and oldest: enough to show the shape; all counted below
            body = fetch(f.url, enterprise.transport._key).content
            assert len(body) == f.size and hashlib.sha1(body).hexdigest() == f.sha1
            assert f.timestamp > 1_600_000_000_000  # epoch milliseconds
        for f in files:
            path = loaded.app.state.datasets.path(loaded.app.state.datasets.file(dataset, f.name))
            lines = gzip.decompress(path.read_bytes()).splitlines()
            stamps = [orjson.loads(line)["timestamp"] for line in lines]
            assert stamps == sorted(stamps) and {s[:length] for s in stamps} == {f.name[:length]}
            seen.update((orjson.loads(line)["ip_str"], s) for line, s in zip(lines, stamps, strict=True))
        assert sum(seen.values()) == len(BANNERS) == len(seen)


async def test_unknown_dataset_and_file_are_404(loaded, enterprise):
    with pytest.raises(NotFound, match="No such dataset"):
        await enterprise.data.files("hourly")
    answer = fetch(f"{loaded.url}/intel/data/daily/..%2Fspyglass.db", enterprise.transport._key)
    assert answer.status_code == 404 and "error" in answer.json()


async def test_range_requests(loaded, enterprise):
    settle(loaded)
    f = (await enterprise.data.files("monthly"))[0]
    key = enterprise.transport._key
    whole = fetch(f.url, key)
    assert whole.status_code == 200 and whole.headers["accept-ranges"] == "bytes"
    assert whole.headers["etag"] == f'"{f.sha1}"'
    part = fetch(f.url, key, Range="bytes=10-99")
    assert part.status_code == 206 and part.content == whole.content[10:100]
    assert part.headers["content-range"] == f"bytes 10-99/{f.size}"
    tail = fetch(f.url, key, Range="bytes=-5")
    assert tail.status_code == 206 and tail.content == whole.content[-5:]
    rest = fetch(f.url, key, Range="bytes=100-", **{"If-Range": f'"{f.sha1}"'})
    assert rest.status_code == 206 and rest.content == whole.content[100:]
    changed = fetch(f.url, key, Range="bytes=100-", **{"If-Range": '"0000"'})
    assert changed.status_code == 200 and changed.content == whole.content  # the file changed: all of it
    past = fetch(f.url, key, Range=f"bytes={f.size}-")
    assert past.status_code == 416 and past.headers["content-range"] == f"bytes */{f.size}"
    assert "past the end" in past.json()["error"]


class Interrupted(Exception):
    pass


async def test_a_download_interrupted_resumes_and_its_sha1_is_checked(loaded, enterprise, tmp_path, monkeypatch):
    settle(loaded)
    monkeypatch.setattr(client_data, "CHUNK", 1024)
    monkeypatch.setattr(server_data, "CHUNK", 1024)
    f = max(await enterprise.data.files("monthly"), key=lambda f: f.size)
    assert f.size > 10_000
    dest = tmp_path / f.name

    def stop_midway(done: int, total: int | None) -> None:
        assert total == f.size
        if done > f.size // 2:
            raise Interrupted

    with pytest.raises(Interrupted):
        await enterprise.data.download(f, dest, progress=stop_midway)
    kept = part_path(dest).stat().st_size
    assert 0 < kept < f.size and not dest.exists()

    seen: list[int] = []
    assert await enterprise.data.download(f, dest, progress=lambda done, total: seen.append(done)) == dest
    assert seen[0] == kept  # resumed from the partial file, not from the start
    assert hashlib.sha1(dest.read_bytes()).hexdigest() == f.sha1 and not part_path(dest).exists()
    assert (
        len(gzip.decompress(dest.read_bytes()).splitlines())
        == loaded.app.state.datasets.file("monthly", f.name).banners
    )


async def test_a_corrupt_partial_file_fails_the_sha1_check_and_is_removed(loaded, enterprise, tmp_path):
    settle(loaded)
    f = (await enterprise.data.files("daily"))[0]
    dest = tmp_path / f.name
    part_path(dest).write_bytes(b"\0" * (f.size // 2))
    with pytest.raises(ChecksumMismatch, match="SHA-1"):
        await enterprise.data.download(f, dest)
    assert not part_path(dest).exists() and not dest.exists()
    await enterprise.data.download(f, dest)  # and then it downloads cleanly
    assert hashlib.sha1(dest.read_bytes()).hexdigest() == f.sha1


async def test_newly_collected_banners_land_in_their_day(loaded, enterprise):
    settle(loaded)  # a day after the generated data's (a collected banner may not be dated ahead)
    new = {**BANNERS[0], "timestamp": "2026-11-02T03:04:05.000000", "hash": 4242}
    loaded.collect([new])
    settle(loaded)
    files = {f.name: f for f in await enterprise.data.files("daily")}
    assert "2026-11-02.json.gz" in files
    body = fetch(files["2026-11-02.json.gz"].url, enterprise.transport._key).content
    assert [orjson.loads(line)["hash"] for line in gzip.decompress(body).splitlines()] == [4242]
    months = {f.name for f in await enterprise.data.files("monthly")}
    assert "2026-11.json.gz" in months


def test_the_fixtures_shapes_parse():
    for item in json.loads((ORIGINAL / "datasets.json").read_text()):
        Dataset.model_validate(item)
    for item in json.loads((ORIGINAL / "dataset_files.json").read_text()):
        DatasetFile.model_validate(item)


def test_a_lost_file_is_rebuilt_and_leftovers_removed(tmp_path):
    from spyglass.server.datasets import DatasetService
    from spyglass.server.index import BannerIndex
    from spyglass.server.ingest.importer import import_banners

    index = BannerIndex(tmp_path)
    import_banners(index, (dict(b) for b in BANNERS[:50]))
    service = DatasetService(tmp_path, index)
    service.catch_up()
    lost = service.files("daily")[0]
    before = service.path(lost).read_bytes()
    service.path(lost).unlink()
    leftover = service.root / "monthly" / ".2020-01.json.gz.partial"  # a build killed part way
    leftover.write_bytes(b"half")
    service.recover()
    assert service.behind() and not leftover.exists()
    service.catch_up()
    assert service.path(lost).read_bytes() == before and service.file("daily", lost.name).sha1 == lost.sha1
    service.close()
    index.close()


async def test_a_backend_serving_no_bulk_data_lists_the_files_built_and_builds_none(tmp_path):
    """serve --no-bulk-data: another backend on the same banner store builds the files."""
    from spyglass.server.datasets import DatasetService
    from spyglass.server.index import BannerIndex
    from spyglass.server.ingest.importer import import_banners

    index = BannerIndex(tmp_path)
    import_banners(index, (dict(b) for b in BANNERS[:50]))
    built = DatasetService(tmp_path, index)
    built.catch_up()
    names = [f.name for f in built.files("daily")]
    built.close()
    index.close()
    builders = sum(t.name == "datasets" for t in threading.enumerate())  # other tests' backends
    with backend_with(tmp_path, BANNERS[50:60], bulk_data=False) as backend:
        service = backend.app.state.datasets
        backend.collect([{**BANNERS[0], "timestamp": "2026-11-02T03:04:05.000000", "hash": 4343}])
        service.wake()
        async with Clients.from_profile(backend.profile(backend.key("enterprise"))) as c:
            assert [f.name for f in await c.data.files("daily")] == names  # listed, and nothing new
        assert service.behind()  # the banners since wait for a backend that builds
        assert sum(t.name == "datasets" for t in threading.enumerate()) == builders
