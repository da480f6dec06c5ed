"""The geo pane: ping or DNS a target from this machine and from every geonet location, in a
table that fills in as answers arrive and on a world map coloured by round-trip time."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Button, Input, Select, Static

from spyglass.datagen import is_demo_address
from spyglass.present import geonet
from spyglass.safetext import clean, safe_text
from spyglass.tui.panes.base import Pane
from spyglass.tui.widgets.boxes import put_text
from spyglass.tui.widgets.colours import theme_style
from spyglass.tui.widgets.table import Column, Table
from spyglass.tui.widgets.worldmap import LEVEL_COLOUR, Marker, WorldMap, level_for, mark_of

if TYPE_CHECKING:  # models load with the client, after the first frame
    from spyglass.client import Clients
    from spyglass.models import DnsResult, GeoLocation, PingResult

RECORD_TYPES = ("A", "AAAA", "CNAME", "NS", "SOA", "MX", "TXT", "PTR", "SRV", "CAA")
COLUMNS = [
    Column("location", "Location", 22),
    Column("country", "CC", 2, rank=4),
    Column("min", "Min ms", 7, rank=5),
    Column("avg", "Avg ms", 7, rank=2),
    Column("max", "Max ms", 7, rank=6),
    Column("loss", "Loss", 5, rank=3),
    Column("answer", "Answer", 24, rank=1, flex=True),
]


def this_machine(configured: str | None) -> GeoLocation:
    """Where the dashboard runs: SPYGLASS_LOCATION or the config's ``location``, if set."""
    from spyglass.models import GeoLocation

    text = os.environ.get("SPYGLASS_LOCATION") or configured
    if text:
        parts = [p.strip() for p in text.split(",")]
        if len(parts) == 4:
            return GeoLocation(city=f"This machine ({parts[0]})", country=parts[1], latlon=f"{parts[2]},{parts[3]}")
    return GeoLocation(city="This machine", country="", latlon="")


def ping_cells(result: PingResult) -> list[Any]:
    row = geonet.ping_row(result)
    return [*row.cells[:-1], Text(row.answer, style="red" if row.failed else "")]


def dns_cells(result: DnsResult) -> list[Any]:
    return geonet.dns_row(result).cells


class GeoPane(Pane):
    ID = "geo"
    TITLE = "Geo"
    KEYS = "f4,3"
    SECTION = "geonet"
    HOME = "#geo-results"
    HELP = (
        "Ping or look up a name from this machine and from every geonet location, on a world map. "
        "Type an address or a name and Enter."
    )
    BINDINGS = [Binding("m", "toggle_map", "Map", id="geo.map")]
    DEFAULT_CSS = """
    GeoPane #geo-form { height: 1; margin: 1 0; }
    GeoPane #geo-form Input { width: 1fr; }
    GeoPane #geo-form Select { width: 12; }
    GeoPane #geo-form Button { min-width: 8; }
    GeoPane #geo-results { height: auto; max-height: 14; }
    GeoPane #geo-legend { height: 1; color: $text-muted; }
    GeoPane WorldMap.hidden { display: none; }
    """

    # the widgets it drives
    world_map = getters.query_one(WorldMap)
    table = getters.query_one(Table)
    target_box = getters.query_one("#geo-target", Input)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.locations: dict[str, GeoLocation] = {}
        self.levels: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield self.compose_error()
        with Horizontal(id="geo-form"):
            yield Input(
                placeholder="IP address or hostname, then Enter", id="geo-target", compact=True, select_on_focus=False
            )
            yield Select(
                [("ping", "ping"), ("dns", "dns")], value="ping", allow_blank=False, id="geo-tool", compact=True
            )
            yield Select([(t, t) for t in RECORD_TYPES], value="A", allow_blank=False, id="geo-rtype", compact=True)
            yield Button("Run", id="geo-run", compact=True, variant="primary")
        yield Table(COLUMNS, id="geo-results")
        yield Static(self.legend(), id="geo-legend")
        yield WorldMap()

    def legend(self) -> Text:
        text = Text("map: ")
        for level, label in (("good", "< 50 ms"), ("fair", "< 150 ms"), ("poor", ">= 150 ms"), ("down", "no reply")):
            text.append(f"{mark_of(self.app, level)} ", style=theme_style(self.app, LEVEL_COLOUR[level]))
            text.append(f"{label}   ")
        text.append("(m hides the map)")
        return text

    def action_toggle_map(self) -> None:
        self.world_map.toggle_class("hidden")

    def run_arg(self, arg: str) -> None:
        """Open with ``arg`` filled in and measured (from the host pane, for example)."""
        field = self.target_box
        put_text(field, clean(arg, one_line=True, max_chars=255))
        field.focus()
        self.run()

    @on(Input.Submitted, "#geo-target")
    @on(Button.Pressed, "#geo-run")
    def run(self) -> None:
        from spyglass.netools.targets import check_target

        raw = self.target_box.value
        try:
            target = check_target(raw)
        except ValueError as exc:
            self.show_error(f"{clean(raw.strip(), one_line=True, max_chars=100) or 'nothing'}: {exc}")
            self.clear_results()
            return
        if self.dashboard.backend_info.get("demo") and is_demo_address(target):
            self.show_error(
                f"{target} is a synthetic demo address (the benchmarking range the demo data uses): "
                "nothing real answers there, so it is not measured"
            )
            self.clear_results()
            return
        self.show_error(None)
        tool = self.query_one("#geo-tool", Select).value
        rtype = self.query_one("#geo-rtype", Select).value
        self.clear_results()
        self.call("measure", self.measure, target, str(tool), str(rtype))

    def clear_results(self) -> None:
        """What the last target measured goes: under a refused one it would read as its answer."""
        self.workers.cancel_group(self, "measure")
        self.table.clear_records()
        self.locations.clear()
        self.levels.clear()
        self.world_map.markers = ()

    async def measure(self, target: str, tool: str, rtype: str) -> None:
        here = this_machine(self.dashboard.config.location)
        self.put(here, ["…"] * 5)
        jobs = [self.measure_here(target, tool, rtype, here)]
        clients = self.clients
        if clients is not None:
            jobs.append(self.measure_everywhere(clients, target, tool, rtype))
        # Both run to the end; then a geonet failure is reported like any other call's.
        for outcome in await asyncio.gather(*jobs, return_exceptions=True):
            if isinstance(outcome, BaseException):
                raise outcome

    async def measure_here(self, target: str, tool: str, rtype: str, here: GeoLocation) -> None:
        try:
            if tool == "ping":
                from spyglass.netools.dns import Resolver
                from spyglass.netools.ping import PingFailed, ping

                try:
                    result = await ping(target, here, resolver=Resolver.from_env())
                except PingFailed as exc:
                    self.put(here, ["-"] * 4 + [str(exc)], level="down")
                    return
                self.put(here, ping_cells(result), level=level_for(result.avg_rtt if result.is_alive else None))
            else:
                from spyglass.netools.dns import Resolver

                answer = await Resolver.from_env().query(target, rtype, here)
                self.put(here, dns_cells(answer), level="good" if answer.answers else "down")
        except Exception as exc:  # a local tool failing is a row, not a crash
            self.put(here, ["-"] * 4 + [f"failed: {exc}"], level="down")

    async def measure_everywhere(self, clients: Clients, target: str, tool: str, rtype: str) -> None:
        if tool == "ping":
            pings = await clients.geonet.geoping(target)
            for p in pings:
                self.put(p.from_loc, ping_cells(p), level=level_for(p.avg_rtt if p.is_alive else None))
            missing = pings.missing
        else:
            answers = await clients.geonet.geodns(target, rtype)
            for a in answers:
                self.put(a.from_loc, dns_cells(a), level="good" if a.answers else "down")
            missing = answers.missing
        from spyglass.models import GeoLocation

        for absent in missing:
            place = GeoLocation(city=absent.agent, country="", latlon="")
            self.put(place, ["-"] * 4 + [f"no result: {absent.reason}"], level="down")

    def put(self, where: GeoLocation, cells: list[Any], level: str | None = None) -> None:
        """Add or update the row of one location, and its marker."""
        key = f"{where.city}|{where.country}|{where.latlon}"
        table = self.table
        values = [
            safe_text(where.city, one_line=True, max_chars=60),
            # The column holds a code; an agent that does not know its country ("unknown") says so in
            # the location column instead of showing a cut "un".
            safe_text(where.country if len(where.country) <= 2 else "", one_line=True),
            *[c if isinstance(c, Text) else safe_text(c, one_line=True) for c in cells],
        ]
        record = {column.key: value for column, value in zip(COLUMNS, values, strict=True)}
        if key in self.locations:
            table.update_record(key, record)
        else:
            table.add_record(record, key=key)
        self.locations[key] = where
        if level:
            self.levels[key] = level
        markers = []
        for k, loc in self.locations.items():
            coords = loc.coordinates
            if coords and k in self.levels:
                markers.append(Marker(coords[0], coords[1], self.levels[k]))
        self.world_map.markers = tuple(markers)
