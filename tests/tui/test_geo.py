"""The geo pane driven like a person would: a target, ping or DNS, rows per location, the map."""

from __future__ import annotations

import re
import socket

import pytest
from textual.widgets import DataTable, Input, Select

from spyglass.models import GeoLocation
from spyglass.server.geonet import GeonetSettings
from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.geo import GeoPane
from spyglass.tui.widgets.worldmap import Marker, WorldMap
from tests.conftest import start_backend
from tests.servers import ZONE_NETWORKS, DnsServer
from tests.tui.helpers import screen_text, settle

SIZE = (120, 40)


@pytest.fixture(scope="module")
def dns_server():
    with DnsServer() as server:
        yield server


@pytest.fixture(scope="module")
def geo_backend(tmp_path_factory, dns_server):
    hanging = socket.create_server(("127.0.0.9", 0))
    geonet = GeonetSettings(
        location=GeoLocation(city="Tokyo", country="JP", latlon="35.6895,139.6917"),
        nameservers=[dns_server.host],
        dns_port=dns_server.port,
        ping_count=2,
        peers=[f"http://127.0.0.9:{hanging.getsockname()[1]}"],
        deadline=1.0,
        allow=ZONE_NETWORKS,  # what it pings and resolves: loopback and the test zone
    )
    server, backend = start_backend(tmp_path_factory.mktemp("geo-backend"), geonet=geonet)
    with server:
        yield backend
    hanging.close()
    backend.store.close()


@pytest.fixture(autouse=True)
def _here(monkeypatch, dns_server):
    monkeypatch.setenv("SPYGLASS_LOCATION", "Berlin,DE,52.52,13.405")
    monkeypatch.setenv("SPYGLASS_NAMESERVER", f"{dns_server.host}:{dns_server.port}")


async def open_geo(pilot) -> GeoPane:
    await settle(pilot)
    await pilot.press("f4")
    return pilot.app.query_one(GeoPane)


async def test_ping_fills_rows_and_map(geo_backend):
    app = SpyglassApp(geo_backend.profile(geo_backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_geo(pilot)
        pane.query_one("#geo-target", Input).value = "127.0.0.1"
        await pilot.click("#geo-run")
        await settle(pilot)
        table = pane.query_one(DataTable)
        assert table.row_count == 3
        text = screen_text(app)
        assert "This machine (Berlin)" in text and "Tokyo" in text
        assert "no result: no answer within 1 s" in text
        assert len(pane.query_one(WorldMap).markers) == 2  # Berlin and Tokyo have coordinates
        assert "down" not in {m.level for m in pane.query_one(WorldMap).markers}  # both answered


async def test_dns_from_here_and_the_agent(geo_backend):
    app = SpyglassApp(geo_backend.profile(geo_backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_geo(pilot)
        pane.query_one("#geo-tool", Select).value = "dns"
        pane.query_one("#geo-rtype", Select).value = "MX"
        pane.query_one("#geo-target", Input).value = "example.test"
        await pilot.click("#geo-run")
        await settle(pilot)
        text = screen_text(app)
        assert text.count("MX 10 mail.example.test") == 2


async def test_bad_target_is_a_message_and_keeps_the_input(geo_backend):
    app = SpyglassApp(geo_backend.profile(geo_backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_geo(pilot)
        field = pane.query_one("#geo-target", Input)
        field.value = "not a host!"
        field.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert "not a host!: not an IP address or a hostname" in screen_text(app)
        assert field.value == "not a host!"
        assert pane.query_one(DataTable).row_count == 0
        field.value = "999.999.1.1"  # numbers and dots: no name, though a name's rules would take it
        await pilot.press("enter")
        await settle(pilot)
        assert "999.999.1.1: not a valid IP address (four numbers from 0 to 255)" in screen_text(app)
        assert field.value == "999.999.1.1" and pane.query_one(DataTable).row_count == 0


async def test_this_machine_works_without_a_geonet_server(geo_backend):
    from spyglass.config import Profile

    app = SpyglassApp(Profile(name="down", url="http://127.0.0.1:9", key="k", rate=None))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_geo(pilot)
        pane.query_one("#geo-target", Input).value = "loop.example.test"
        await pilot.click("#geo-run")
        await settle(pilot)
        assert pane.query_one(DataTable).row_count == 1
        assert "127.0.0.1" in screen_text(app)


async def test_map_toggles(geo_backend):
    app = SpyglassApp(geo_backend.profile(geo_backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_geo(pilot)
        pane.query_one(DataTable).focus()
        await pilot.press("m")
        assert not pane.query_one(WorldMap).display
        await pilot.press("m")
        assert pane.query_one(WorldMap).display


async def test_an_agent_that_does_not_know_its_country_shows_no_code(tmp_path):
    server, backend = start_backend(
        tmp_path, geonet=GeonetSettings(ping_count=1, allow=["127.0.0.0/8"])
    )  # no --location
    with server:
        app = SpyglassApp(backend.profile(backend.key()))
        async with app.run_test(size=SIZE) as pilot:
            pane = await open_geo(pilot)
            pane.query_one("#geo-target", Input).value = "127.0.0.1"
            await pilot.click("#geo-run")
            await settle(pilot)
            table = pane.query_one(DataTable)
            rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
            agent = next(row for row in rows if row[0] == "unknown location")
            assert agent[1] == ""  # not a cut "un"
    backend.store.close()


async def test_a_refused_target_clears_the_last_measurement(geo_backend):
    # `not a host!: not an IP address or a hostname` stood above the last target's rows and map.
    app = SpyglassApp(geo_backend.profile(geo_backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_geo(pilot)
        field = pane.query_one("#geo-target", Input)
        field.value = "127.0.0.1"
        await pilot.click("#geo-run")
        await settle(pilot)
        assert pane.query_one(DataTable).row_count == 3
        field.value = "not a host!"
        field.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert "not a host!: not an IP address or a hostname" in screen_text(app)
        assert pane.query_one(DataTable).row_count == 0 and not pane.query_one(WorldMap).markers


async def test_without_colour_each_level_has_its_own_mark_on_the_map_and_its_legend(geo_backend, monkeypatch):
    # Under NO_COLOR the legend read "map: ● < 50 ms   ● < 150 ms   ● >= 150 ms   ● no reply" and
    # every marker was the same ●: colour alone told them apart (issue 45, M5).
    monkeypatch.setenv("NO_COLOR", "1")
    app = SpyglassApp(geo_backend.profile(geo_backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_geo(pilot)
        places = {"good": (52.5, 13.4), "fair": (35.7, 139.7), "poor": (-33.9, 151.2), "down": (40.7, -74.0)}
        pane.query_one(WorldMap).markers = tuple(Marker(lat, lon, level) for level, (lat, lon) in places.items())
        await settle(pilot)
        text = screen_text(app)
        legend = next(line for line in text.splitlines() if line.strip().startswith("map:"))
        marks = re.findall(r"(\S) (?:< 50 ms|< 150 ms|>= 150 ms|no reply)", legend)
        assert len(marks) == 4 and len(set(marks)) == 4, legend
        drawn = text.split(legend, 1)[1]  # the map is below its legend
        assert all(mark in drawn for mark in marks), drawn
