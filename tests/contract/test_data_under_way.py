"""Bulk data lists a day or a month once it has ended (issue 45, minor 14): today's file, rebuilt
as banners arrived, changed its SHA-1 between listings and downloaded a part day under the day's
name. The backend's clock is the test's: the day ends when the test says so."""

from __future__ import annotations

from datetime import datetime

import pytest

from spyglass.client import Clients, NotFound
from spyglass.datagen import generate
from tests.conftest import backend_with
from tests.contract.test_data_api import fetch, settle


def banner_at(stamp: str, n: int) -> dict:
    banner = dict(next(iter(generate(1, seed=300 + n))))
    banner.pop("ip", None)
    return banner | {"ip_str": f"198.18.252.{n}", "timestamp": stamp, "hash": 5000 + n}


async def test_the_day_and_month_under_way_are_listed_once_they_end(tmp_path):
    now = [datetime(2026, 6, 15, 12, 0, 0)]  # (the collector refuses banners dated ahead of the real clock)
    generated = list(generate(30, seed=8))
    with backend_with(tmp_path, generated, clock=lambda: now[0]) as backend:
        async with Clients.from_profile(backend.profile(backend.key("enterprise"))) as c:
            assert backend.collect(
                [banner_at("2026-06-14T08:00:00.000000", 1), banner_at("2026-06-15T08:00:00.000000", 2)]
            )
            settle(backend)
            daily = {f.name: f for f in await c.data.files("daily")}
            assert "2026-06-14.json.gz" in daily and "2026-06-15.json.gz" not in daily
            assert "2026-06.json.gz" not in {f.name for f in await c.data.files("monthly")}
            with pytest.raises(NotFound):
                await c.data.file("daily", "2026-06-15.json.gz")
            guessed = daily["2026-06-14.json.gz"].url.replace("06-14", "06-15")  # nor downloaded by its name
            assert fetch(guessed, c.transport._key).status_code == 404

            assert backend.collect([banner_at("2026-06-15T09:00:00.000000", 3)])
            settle(backend)
            assert {f.name: f for f in await c.data.files("daily")} == daily  # the same names and SHA-1s

            now[0] = datetime(2026, 6, 16, 0, 0, 1)  # the day has ended, not the month
            settle(backend)
            ended = {f.name: f for f in await c.data.files("daily")}
            assert ended.keys() - daily.keys() == {"2026-06-15.json.gz"}
            got = await c.data.file("daily", "2026-06-15.json.gz")
            assert got.sha1 == ended["2026-06-15.json.gz"].sha1
            built = backend.app.state.datasets.file("daily", "2026-06-15.json.gz")
            on_the_day = sum(b["timestamp"].startswith("2026-06-15") for b in generated) + 2
            assert built is not None and built.banners == on_the_day  # the whole day, both banners collected
            assert "2026-06.json.gz" not in {f.name for f in await c.data.files("monthly")}
