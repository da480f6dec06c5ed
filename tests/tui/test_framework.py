"""The pane framework driven like a person would: panes load when shown, failures are reported in
one place, panes talk through messages, stale pages are dropped, and the keys work from anywhere."""

from __future__ import annotations

import os
import stat

import pytest
from textual.widgets import DataTable, Input, Static

from spyglass.client import AccountClient, SearchClient, ToolsClient
from spyglass.datagen import generate
from spyglass.tui.app import SpyglassApp, run_dashboard
from spyglass.tui.messages import OpenHost
from spyglass.tui.panes import PANES, load_panes, pane_ids
from spyglass.tui.panes.account import AccountPane
from spyglass.tui.panes.geo import GeoPane
from spyglass.tui.panes.host import HostPane
from spyglass.tui.panes.search import COLUMNS, SearchPane
from spyglass.tui.screens.help import HelpScreen, bad_key
from spyglass.tui.stablepages import StablePages
from spyglass.tui.widgets.queryinput import History
from spyglass.tui.widgets.statusbar import StatusBar
from spyglass.tui.widgets.table import fit_columns
from tests.conftest import backend_with
from tests.tui.helpers import one_read, screen_text, settle, until
from tests.unit.test_index import latest_of_each_service

BANNERS = list(generate(800, seed=5))
CURRENT = latest_of_each_service(BANNERS)  # what search sees: the latest banner of each service


@pytest.fixture(scope="module")
def data_backend(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("tui-framework"), BANNERS) as backend:
        yield backend


@pytest.fixture
def calls(monkeypatch):
    """The names of the client methods called, in order; the real calls still run."""
    seen: list[str] = []
    for owner, name in (
        (AccountClient, "profile"),
        (ToolsClient, "http_headers"),
        (SearchClient, "search"),
        (SearchClient, "host"),
    ):
        real = getattr(owner, name)

        def spy(self, *args, _real=real, _name=name, **kwargs):
            seen.append(_name)
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(owner, name, spy)
    return seen


async def run_query(pilot, text: str) -> None:
    field = pilot.app.query_one("#query", Input)
    field.focus()
    field.value = text
    await pilot.press("enter")
    await settle(pilot)


def test_registry_ids_are_module_names():
    classes = load_panes()
    assert [cls.ID for cls in classes] == pane_ids()
    assert pane_ids()[:4] == ["search", "host", "geo", "account"]
    assert {"directory", "dns"} <= set(pane_ids())
    assert len(classes) == len(PANES) == len(set(pane_ids()))
    for cls in classes:
        assert cls.TITLE and cls.HELP and cls.SECTION  # KEYS may be empty: ctrl+g and the pane bar reach it
    keys = [key for cls in classes for key in cls.KEYS.split(",") if key]
    assert len(keys) == len(set(keys))  # no two panes share a key


async def test_panes_mount_and_load_when_first_shown(data_backend, calls):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert not app.query(AccountPane) and not app.query(HostPane)  # connecting loaded only the first
        assert "profile" not in calls and "http_headers" not in calls
        await pilot.press("f5")
        await settle(pilot)
        assert calls.count("profile") == 1 and app.query_one(AccountPane).display
        await pilot.press("f2", "f5")  # shown again, not stale: no new request
        await settle(pilot)
        assert calls.count("profile") == 1
        await app.reopen()  # after a reconnect every pane is stale, and reloads when shown
        await settle(pilot)
        assert calls.count("profile") == 2


async def test_a_failing_call_shows_once_in_the_pane_in_view(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("free")))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await run_query(pilot, "port:80")
        assert screen_text(app).count("Insufficient query credits") == 1
        assert not app.query_one(StatusBar).note and not app._notifications
        await run_query(pilot, "nginx")  # free: the next success of the same call clears it
        assert app.query_one(StatusBar).note == ""


async def test_enter_on_a_result_opens_the_host_by_message(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await run_query(pilot, "port:443")
        results = app.query_one("#results", DataTable)
        results.focus()
        await pilot.press("G", "s")  # the last row, then sort by the first column: keys follow the rows
        await settle(pilot)
        pane = app.query_one(SearchPane)
        shown_ip = results.get_row_at(results.cursor_row)[0].plain
        await pilot.press("enter")
        await settle(pilot)
        host = app.query_one(HostPane)
        assert host.display and host.record is not None and host.record.ip_str == shown_ip
        assert shown_ip in [ip for ip, _ in pane.results.items]


async def test_a_page_of_an_older_query_is_dropped(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await run_query(pilot, "has_ssl:false")
        pane = app.query_one(SearchPane)
        older = pane.results.listing
        await run_query(pilot, "port:22")
        rows = list(pane.results.items)
        # The page the older query asked for arrives after the newer query's answer.
        older_pages = StablePages(lambda page: app.clients.search.search("has_ssl:false", page=page))
        old_rows, more = await pane.page_of(older_pages, 2)
        assert old_rows and more and not pane.results.add_page(older, 2, old_rows, more)
        assert pane.results.items == rows and pane.results.pages == 1
        expected = {b["ip_str"] for b in BANNERS if b["port"] == 22}
        assert {ip for ip, _ in pane.results.items} <= expected


async def test_pane_option_opens_a_pane_with_its_argument_run(data_backend):
    ip = BANNERS[0]["ip_str"]
    app = SpyglassApp(data_backend.profile(data_backend.key("member")), pane="host", arg=ip)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        host = app.query_one(HostPane)
        assert host.display and host.query_one("#host-ip", Input).value == ip
        assert host.record is not None and host.record.ip_str == ip
        assert not app.query(SearchPane)  # the first pane was never needed


async def test_pane_option_search_runs_the_query(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")), pane="search", arg="port:22")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        pane = app.query_one(SearchPane)
        assert pane.current_query == "port:22" and pane.total == sum(b["port"] == 22 for b in CURRENT)
        assert app.focused is app.query_one("#query", Input)


def test_unknown_pane_is_a_usage_error(capsys):
    assert run_dashboard(pane="nope") == 2
    err = capsys.readouterr().err
    assert "unknown pane 'nope'" in err and ", ".join(pane_ids()) in err


async def test_function_keys_switch_from_inside_an_input_and_esc_leaves_it(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        query = app.query_one("#query", Input)
        assert app.focused is query  # typing works at once on the first screen
        await pilot.press("q", "4")  # q and digits type in an input
        assert query.value == "q4" and app.is_running
        await pilot.press("f4")  # a function key switches from inside the input
        await settle(pilot)
        geo = app.query_one(GeoPane)
        target = geo.query_one("#geo-target", Input)
        assert geo.display and app.focused is target
        await pilot.press("q")
        assert target.value == "q" and app.is_running
        await pilot.press("escape")  # Esc leaves the input for the pane
        assert app.focused is geo.query_one("#geo-results")
        await pilot.press("1")  # a digit on a list goes to the pane's box, as a port would
        await settle(pilot)
        assert geo.display and target.value == "q1"
        await pilot.press("escape", "f2")  # an F-key switches
        await settle(pilot)
        assert app.query_one(SearchPane).display and not geo.display
        await pilot.press("escape", "ctrl+g")  # the pane palette
        await pilot.pause()
        await pilot.press(*"accou", "enter")
        await settle(pilot)
        assert app.query_one(AccountPane).display


async def test_help_lists_every_pane_and_the_keymap(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")), keymap={"host.history": "H"})
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f1")  # F1 works from the query input, ? types there
        assert isinstance(app.screen, HelpScreen)
        scroll = app.screen.query_one("VerticalScroll")
        assert scroll.max_scroll_y > 0  # longer than 80x24: it scrolls
        text = ""
        for _ in range(20):
            text += screen_text(app)
            await pilot.press("pagedown")
            await pilot.pause()
        for binding_id in (
            "pane.search",
            "pane.account",
            "go_to_pane",
            "search.export",
            "host.copy_banner",
            "geo.map",
            "table.down",
            "table.sort",
            "pane.leave_input",
            "help.close",
        ):
            assert binding_id in text, binding_id
        for title in ("Search (F2 1)", "Host (F3 2)", "Geo (F4 3)", "Account (F5 4)", "Tables"):
            assert title in text, title
        assert "H               History" in text  # the remapped key, not h


async def test_a_bad_keymap_is_reported_at_start(data_backend):
    keymap = {"no.such.binding": "x", "help": "ctrl+nonsense_key", "quit": "ctrl+q"}
    app = SpyglassApp(data_backend.profile(data_backend.key("member")), keymap=keymap)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        messages = [str(n.message) for n in app._notifications]
    assert any("no binding 'no.such.binding'" in m for m in messages)
    assert any("'ctrl+nonsense_key' is not a key name" in m for m in messages)
    assert not any("'quit'" in m for m in messages)


async def test_a_key_the_keymap_says_is_no_key_leaves_the_binding_its_own(data_backend):
    """Newcomer trial 15, major: `"pane.search": "ctrl+shift+nonsense"` was said to be no key name
    and applied anyway: F2 went nowhere and the pane bar read `shift+^nonsense Search`. An unknown
    theme was not said at all."""
    keymap = {"pane.search": "ctrl+shift+nonsense", "pane.host": "f3,ctrl+nonsense"}
    app = SpyglassApp(data_backend.profile(data_backend.key("member")), keymap=keymap, theme="nope")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        messages = [str(n.message) for n in app._notifications]
        assert any("'ctrl+shift+nonsense' is not a key name" in m for m in messages)
        assert any("theme: 'nope' is no theme" in m for m in messages)
        assert "nonsense" not in screen_text(app) and "F2 Search" in screen_text(app)
        await pilot.press("f3")
        await settle(pilot)
        assert app.query_one("#panes").current == "pane-host"  # its good key kept
        await pilot.press("f2")
        await settle(pilot)
        assert app.query_one("#panes").current == "pane-search"


def test_key_names():
    assert not any(bad_key(k) for k in ("j", "G", "f12", "ctrl+g", "question_mark", "shift+tab", "escape"))
    assert all(bad_key(k) for k in ("ctrl+nonsense_key", "hyperdrive+x", "f99x", ""))


async def test_query_history_is_kept_between_runs(data_backend):
    for query in ("port:22", "port:443"):
        app = SpyglassApp(data_backend.profile(data_backend.key("member")))
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            await run_query(pilot, query)
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        field = app.query_one("#query", Input)
        await pilot.press("x", "up")
        assert field.value == "port:443"
        await pilot.press("up")
        assert field.value == "port:22"
        await pilot.press("down", "down")
        assert field.value == "x"  # back to what was being typed
        await run_query(pilot, "port:80")  # it stays in the box: Up recalls the one before it
        await pilot.press("up")
        assert field.value == "port:443"


def test_history_is_bounded(tmp_path):
    history = History(tmp_path / "h", size=3)
    for n in range(5):
        history.add(f"q{n}")
    history.add("q3")
    assert History(tmp_path / "h", size=3).entries == ["q2", "q4", "q3"]


def test_two_dashboards_keep_each_others_history(tmp_path):
    """Each dashboard rewrote the file with its own queries alone: the last to search won."""
    first, second = History(tmp_path / "h"), History(tmp_path / "h")
    first.add("port:22")
    second.add("nginx")
    first.add("port:443")
    assert History(tmp_path / "h").entries == ["port:22", "nginx", "port:443"]
    assert first.entries[-2] == "nginx"  # Up in the first dashboard reaches the second's query


def test_the_search_history_is_its_owners_alone_as_the_config_is(tmp_path):
    """What was searched is as private as the key beside it: 0600 whatever the umask."""
    old = os.umask(0o022)
    try:
        History(tmp_path / "search-history").add("port:22 org:secret")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "search-history").stat().st_mode) == 0o600


async def test_account_pane_follows_credits_spent_elsewhere(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        assert "100 of 100 left" in screen_text(app)
        await pilot.press("f2")
        await run_query(pilot, "port:22")
        await pilot.press("f5")
        await settle(pilot)
        assert "99 of 100 left" in screen_text(app)


async def test_palette_opens_a_host_or_runs_a_search(data_backend):
    ip = BANNERS[3]["ip_str"]
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*ip)
        await settle(pilot)
        assert f"Open host {ip}" in screen_text(app) and f"Ping {ip} from everywhere" in screen_text(app)
        await pilot.press(*["backspace"] * len(ip), *"999.1.1.1")  # numbers and dots that are no address
        await settle(pilot)
        assert "Ping 999.1.1.1" not in screen_text(app) and "Search 999.1.1.1" in screen_text(app)
        await pilot.press(*["backspace"] * len("999.1.1.1"), *ip)
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.query_one(HostPane).record.ip_str == ip
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"port:8080")
        await settle(pilot)
        assert "Search port:8080" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot)
        assert app.query_one(SearchPane).current_query == "port:8080"
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"red")  # begins no command's word: a search, though tREnDs matches it
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.current_pane(), SearchPane) and app.query_one(SearchPane).current_query == "red"

        # On a host, the palette offers to pivot on the value selected in its pivot list.
        app.post_message(OpenHost(ip))
        await settle(pilot)
        pivot = app.query_one(HostPane).pivot_choice()
        assert pivot is not None
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"pivot")
        await settle(pilot)
        assert "Pivot on" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot)
        assert app.query_one(SearchPane).current_query == pivot.term


def test_result_columns_fit_the_width():
    def names(width: int) -> list[str]:
        return [column.key for column, _ in fit_columns(COLUMNS, width)]

    assert names(46) == ["ip", "port", "title"]
    assert "seen" in names(80) and "org" not in names(80)
    assert names(160) == ["ip", "port", "org", "country", "product", "title", "seen"]
    shown = fit_columns(COLUMNS, 160)
    assert sum(width + 2 for _, width in shown) == 160  # the flexible column takes the rest


def test_the_room_left_goes_to_cells_cut_short_first():
    """Issue 45, minor 10: a Product or a notifier's description cut short while 20 cells stayed
    empty (the room left went to the flexible column, or nowhere once it was dropped)."""
    from spyglass.tui.panes.host import COLUMNS as HOST
    from spyglass.tui.panes.notifiers import COLUMNS as NOTIFIERS

    shown = {c.key: width for c, width in fit_columns(HOST, 40, {"product": 24})}
    assert list(shown) == ["port", "product"] and shown["product"] == 24
    shown = {c.key: width for c, width in fit_columns(NOTIFIERS, 100, {"description": 30, "args": 12})}
    assert shown["description"] == 30 and sum(w + 2 for w in shown.values()) == 100


def test_one_query_always_shows_the_same_columns():
    """Issue 45, minor 16: the columns followed the rows of the page (no CC for country:DE,FR
    when a page held only DE); they follow what the query pins."""
    from spyglass.tui.panes.search import columns_for

    ranks = lambda query: {c.key: c.rank for c in columns_for(query)}  # noqa: E731
    assert ranks("country:DE,FR") == ranks("country:DE,FR org:x,y") == {c.key: c.rank for c in COLUMNS}
    pinned = ranks("port:22 country:DE -org:x")
    assert pinned["port"] >= 100 and pinned["country"] >= 100 and pinned["org"] < 100


def test_a_facet_named_twice_is_a_problem_not_a_refused_search():
    """The server refuses a facet named twice (issue 44): the pane keeps the first and says so."""
    from spyglass.tui.panes.search import facet_spec

    facets, problems = facet_spec("port,org:5,PORT:3")
    assert [(f.name, f.size) for f in facets] == [("port", 10), ("org", 5)]
    assert problems == ["facet 'port' is named twice"]


async def test_demo_note_goes_when_the_backend_no_longer_holds_demo_data(data_backend):
    records = data_backend.app.state.banners.records
    records.set_meta("demo", "1")
    try:
        app = SpyglassApp(data_backend.profile(data_backend.key("member")))
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            assert "Demo data:" in screen_text(app)
            records.set_meta("demo", "0")  # as after importing real data
            await pilot.press("escape", "r")  # no query yet: r asks the backend again
            await settle(pilot)
            assert "Demo data:" not in screen_text(app)
    finally:
        records.set_meta("demo", "0")


async def test_a_query_count_line_stays_when_the_pane_loads_again(data_backend):
    """As after the backend was replaced: the demo note took the count line's place over its rows."""
    records = data_backend.app.state.banners.records
    records.set_meta("demo", "1")
    try:
        app = SpyglassApp(data_backend.profile(data_backend.key("member")), pane="search", arg="port:22")
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            said = str(app.query_one("#search-status", Static).render())
            assert "Demo data:" not in said and "result" in said
            app.query_one(SearchPane).reload()
            await settle(pilot)
            assert str(app.query_one("#search-status", Static).render()) == said
    finally:
        records.set_meta("demo", "0")


async def test_demo_note_counts_the_demo_banners_apart_from_imported_ones(tmp_path):
    """A demo data dir the user imported into: the note counts the synthetic banners alone, and
    says the others are the user's (newcomer trial: it counted the imported ones as demo)."""
    own = {**BANNERS[0], "ip_str": "192.0.2.7", "ip": 3221225991}
    with backend_with(tmp_path, [*BANNERS[:50], own]) as backend:
        backend.app.state.banners.records.set_meta("demo", "1")
        app = SpyglassApp(backend.profile(backend.key("member")))
        async with app.run_test(size=(160, 36)) as pilot:
            await settle(pilot)
            demo = len(latest_of_each_service(BANNERS[:50]))
            assert f"Demo data: {demo:,} synthetic services in 198.18.0.0/15 beside 1 of yours." in screen_text(app)


def test_sort_keys_order_numbers_and_addresses_by_value():
    from spyglass.tui.widgets.table import sort_key

    cells = ["198.18.10.21", "198.18.1.139", "443/tcp", "22/tcp", "nginx", "::1", "Apache"]
    assert sorted(cells, key=sort_key) == [
        "22/tcp",
        "443/tcp",
        "198.18.1.139",
        "198.18.10.21",
        "::1",
        "Apache",
        "nginx",
    ]


async def test_result_columns_follow_the_terminal_size(data_backend):
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await run_query(pilot, "has_ssl:false")  # ports differ from row to row: the column stays
        results = app.query_one("#results", DataTable)
        rows = results.row_count
        assert [c.key.value for c in results.ordered_columns] == ["ip", "port", "title"]
        await pilot.resize_terminal(200, 50)
        await settle(pilot)
        assert [c.key.value for c in results.ordered_columns][-1] == "seen" and results.row_count == rows
        title = next(c for c in results.ordered_columns if c.key.value == "title")
        before = title.width
        await pilot.resize_terminal(210, 50)  # the same columns: the flexible one takes the room
        await settle(pilot)
        assert title.width == before + 10 and results.row_count == rows
        assert "Seen" in screen_text(app)


async def test_coming_back_to_a_pane_keeps_what_was_typed(data_backend):
    """Focus that moves on its own (a pane switch) selects nothing: the next key adds, not replaces."""
    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        field = app.query_one("#query", Input)
        field.focus()
        await pilot.press(*"port:22")
        await pilot.press("escape", "f3", "f2")
        await settle(pilot)
        assert app.focused is field
        await pilot.press("x")
        assert field.value == "port:22x"


def test_the_dashboard_needs_a_terminal(capsys):
    assert run_dashboard() == 2  # under pytest stdin is no terminal: a script gets a line, not escape codes
    assert "needs a terminal" in capsys.readouterr().err


async def test_down_keys_in_one_read_each_scroll_the_help_a_line(data_backend):
    """Newcomer trial 15, major: ten Downs in one burst scrolled the help 3 or 4 lines (the Host
    summary too): a scroll is done after the next refresh, and each Down scrolled from where the
    one before it had not yet gone."""
    from textual.containers import VerticalScroll

    app = SpyglassApp(data_backend.profile(data_backend.key("member")))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)
        view = app.screen.query_one(VerticalScroll)
        assert view.max_scroll_y > 20 and view.scroll_y == 0
        one_read(app, *["down"] * 10)
        await settle(pilot)
        await until(pilot, lambda: view.scroll_y == view.scroll_target_y, "the scroll's end")
        assert view.scroll_y == 10


async def test_an_unknown_alert_signal_is_said_at_the_start(data_backend):
    """Newcomer trials 17 and 18, minor: `"alert_signal": "siren"` was passed over in silence."""
    from spyglass.config import Config

    config = Config(alert_signal="siren")
    app = SpyglassApp(data_backend.profile(data_backend.key("member")), config=config)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        messages = [str(n.message) for n in app._notifications]
        assert any("alert_signal: 'siren' is none of off, bell, osc9, osc777" in m for m in messages), messages
