"""The directory and DNS panes driven like an analyst would, against a backend with real data and
a real DNS server on loopback."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, OptionList, Select

from spyglass.datagen import generate
from spyglass.server.geonet import GeonetSettings
from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.directory import DirectoryPane
from spyglass.tui.panes.dns import DnsPane
from spyglass.tui.panes.host import HostPane
from spyglass.tui.panes.search import SearchPane
from spyglass.tui.screens.savequery import SaveQueryScreen
from tests.conftest import backend_with
from tests.servers import DnsServer
from tests.tui.helpers import screen_text, settle, until

SIZE = (120, 36)


@pytest.fixture(scope="module")
def data_backend(tmp_path_factory):
    with DnsServer() as dns:
        geonet = GeonetSettings(nameservers=[dns.host], dns_port=dns.port, dns_timeout=2.0)
        with backend_with(tmp_path_factory.mktemp("tui-dirdns"), generate(1500, seed=11), geonet=geonet) as backend:
            yield backend


async def open_pane(pilot, key: str, pane_type):
    await settle(pilot)
    pilot.app.query_one("#query", Input).blur()
    await pilot.press(key)
    await settle(pilot)
    return pilot.app.query_one(pane_type)


async def test_browse_filter_by_tag_vote_and_run(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(pilot, "f10", DirectoryPane)
        assert pane.total >= 30 and len(pane.shown) == 10
        assert "Industrial control" in screen_text(app)
        box = app.query_one("#dir-search", Input)
        box.insert_text_at_cursor("redis")  # a search typed before (the cursor left after it)
        tags = app.query_one("#dir-tags", OptionList)
        tags.focus()
        tags.highlighted = pane.tag_values.index("ics")
        await pilot.press("enter")
        await settle(pilot)
        assert box.value == "tag:ics"
        assert box.cursor_position == len("tag:ics")  # what is typed next adds to it (was: tag:icsi)
        assert pane.shown and all("ics" in q.tags for q in pane.shown)
        table = app.query_one("#dir-queries", DataTable)
        assert table.has_focus
        votes = pane.shown[0].votes
        await pilot.press("plus")
        await settle(pilot)
        assert pane.shown[0].votes == votes + 1
        assert str(votes + 1) in screen_text(app)
        await pilot.press("plus")  # again: one vote a query, and it says so (newcomer trial 17: silent)
        said = lambda: any("You voted up already" in n.message for n in app._notifications)  # noqa: E731
        await until(pilot, said, "the second vote said")
        assert pane.shown[0].votes == votes + 1
        sort = app.query_one("#dir-sort", Select)
        sort.focus()  # Tab's stop after the search box: + and - vote there too, as the footer says
        await settle(pilot)
        await pilot.press("minus")
        await settle(pilot)
        assert not sort.expanded and pane.shown[0].votes == votes - 1  # (newcomer trial 14: it opened)
        table.focus()
        query = pane.shown[0].query
        await pilot.press("enter")
        await settle(pilot)
        search = app.query_one(SearchPane)
        assert search.display and search.current_query == query and search.total > 0


async def test_one_match_is_one_saved_query(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(pilot, "f10", DirectoryPane)
        app.query_one("#dir-search", Input).value = "ProFTPD"
        app.query_one("#dir-search", Input).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert pane.total == 1
        assert "1 saved query matching 'ProFTPD', 1 shown" in screen_text(app)


async def test_paging_past_the_first_ten(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(pilot, "f10", DirectoryPane)
        app.query_one("#dir-queries", DataTable).focus()
        await pilot.press("G")
        await settle(pilot)
        assert len(pane.shown) == 20


async def test_save_the_search_panes_query(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        directory = await open_pane(pilot, "f10", DirectoryPane)  # loaded before the save
        before = directory.total
        await pilot.press("f2")
        await settle(pilot)
        app.query_one("#query", Input).value = "port:22 country:DE"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, SaveQueryScreen)
        await pilot.press("enter")  # no title yet: refused, and the dialog stays
        await pilot.press("enter", "enter")
        await settle(pilot)
        assert "A title is needed" in screen_text(app)
        app.screen.query_one("#save-title", Input).value = "German SSH"
        app.screen.query_one("#save-tags", Input).value = "ssh,germany"
        app.screen.query_one("#save-description", Input).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, SaveQueryScreen)
        found = await app.clients.directory.search("German SSH")
        assert [(q.query, q.tags) for q in found.matches] == [("port:22 country:DE", ["ssh", "germany"])]
        # the directory pane, told by a message, loads again when next shown: the query is there
        await open_pane(pilot, "f10", DirectoryPane)
        assert directory.total == before + 1


async def test_a_query_that_does_not_parse_is_not_saved(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one("#query", Input).value = "port:notanumber"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not isinstance(app.screen, SaveQueryScreen)
        assert "Fix the query first" in screen_text(app)


async def test_domain_lookup_and_open_an_ip(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(pilot, "f11", DnsPane)
        field = app.query_one("#dns-input", Input)
        field.focus()
        field.value = "aurora-tv.example"
        await pilot.press("enter")
        await settle(pilot)
        assert pane.ips and app.clients.credits.query == 99
        text = screen_text(app)
        assert ".aurora-tv.example" in text and f"{len(pane.ips)} records" in text
        # a domain the index does not know: the name server is asked instead, said once
        field.value = "nosuch.example"
        await pilot.press("enter")
        await settle(pilot)
        text = screen_text(app)
        assert "the index knows no records under nosuch.example; 0 of 1 answered" in text
        assert "No information available" not in text and ".aurora-tv.example" not in text
        assert app.query_one("#dns-tool", Select).value == "resolve" and pane.refresh_cost() is None
        assert not app._notifications and app.clients.credits.query == 99
        field.value = "localhost"  # one label: no domain to look up, so it is resolved
        await pilot.press("enter")
        await settle(pilot)
        assert app.query_one("#dns-tool", Select).value == "resolve" and " of 1 answered" in screen_text(app)
        field.value = "aurora-tv.example"  # a domain again: looked up as one (the choice was not changed)
        await pilot.press("enter")
        await settle(pilot)
        assert app.query_one("#dns-tool", Select).value == "domain" and ".aurora-tv.example" in screen_text(app)
        field.value = "aurora-tv.example"
        await pilot.press("enter")
        await settle(pilot)
        table = app.query_one("#dns-results", DataTable)
        table.focus()
        await pilot.press("enter")
        await settle(pilot)
        host = app.query_one(HostPane)
        assert host.display and pane.ips[0] in screen_text(app)


async def test_resolve_and_reverse_are_picked_from_what_is_typed(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        await open_pane(pilot, "f11", DnsPane)
        field = app.query_one("#dns-input", Input)
        field.focus()
        field.value = "example.test, loop.example.test"
        await pilot.press("enter")
        await settle(pilot)
        assert app.query_one("#dns-tool", Select).value == "resolve"
        text = screen_text(app)
        assert "192.0.2.10" in text and "127.0.0.1" in text and "2 of 2 answered" in text
        field.value = "192.0.2.10 192.0.2.99"
        await pilot.press("enter")
        await settle(pilot)
        assert app.query_one("#dns-tool", Select).value == "reverse"
        text = screen_text(app)
        assert "example.test" in text and "(none)" in text and "1 of 2 answered" in text
        field.value = "192.0.2.10 not_a..name"
        await pilot.press("enter")
        await settle(pilot)
        assert "not_a..name: not a domain or hostname" in screen_text(app)
        assert field.value == "192.0.2.10 not_a..name"  # what was typed stays
        field.value = "example.test 192.0.2.10"  # an address among names was resolved as a name
        await pilot.press("enter")
        await settle(pilot)
        assert "192.0.2.10: not a name: addresses are reversed, names resolved; look them up apart" in screen_text(app)
        for typed in ("999.999.1.1", "example.test 10.0.0"):  # numbers and dots are no name
            field.value = typed
            await pilot.press("enter")
            await settle(pilot)
            wrong = typed.split()[-1]
            assert f"{wrong}: not a valid IP address (four numbers from 0 to 255)" in screen_text(app)
            assert field.value == typed and app.query_one(DnsPane).ips == ["192.0.2.10", "192.0.2.99"]  # kept
        assert app.clients.credits.query == 100  # resolve and reverse are free
        field.value = "example.test"  # typed on the results: a new name, not glued on (newcomer trial 11)
        app.query_one(DnsPane).results.focus()
        await pilot.press("1", "9", "8")
        assert field.value == "example.test 198" and field.has_focus


async def test_the_footer_offers_no_key_the_search_box_takes_as_text(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(pilot, "f10", DirectoryPane)
        pane.query_one("#dir-search", Input).focus()
        await settle(pilot)
        footer = screen_text(app).splitlines()[-1]
        assert "Search" not in footer and "Vote" not in footer, footer
        app.query_one("#dir-queries", DataTable).focus()
        await settle(pilot)
        footer = screen_text(app).splitlines()[-1]
        assert "/ Search" in footer and "Vote up" in footer, footer


async def test_a_refused_lookup_keeps_the_rows_of_the_last_one_and_names_them(data_backend):
    # `bad name!: not a domain or hostname` stood above the last lookup's records, read as its answer;
    # then they went, and a slip in the box wiped what was being read (newcomer trial 17).
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(pilot, "f11", DnsPane)
        field = app.query_one("#dns-input", Input)
        field.focus()
        field.value = "aurora-tv.example"
        await pilot.press("enter")
        await settle(pilot)
        assert pane.ips
        field.value = "bad name!"
        await pilot.press("enter")
        await settle(pilot)
        text = screen_text(app)
        assert "name!: not a domain or hostname (still showing aurora-tv.example)" in text
        assert app.query_one("#dns-tool", Select).value == "domain"  # the lookup of the rows shown
        assert ".aurora-tv.example" in text and pane.ips and field.value == "bad name!"
