"""The account pane: plan, credits and usage limits, the profile, and what the server sees."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal

from spyglass.present.values import moment, yes_no
from spyglass.safetext import safe_text
from spyglass.tui.console import on_console
from spyglass.tui.panes.base import Pane
from spyglass.tui.widgets.facts import Facts, bar
from spyglass.tui.widgets.table import Column, Table

if TYPE_CHECKING:
    from spyglass.client import Clients


def allowance(left: int, limit: int | None, console: bool = False) -> Text:
    """``left of limit`` with a bar of what is left (on the Linux console, without eighth blocks)."""
    if not limit:
        return Text(f"{left:,}")
    shown = bar(left / limit, 16)
    shown = shown.translate({ord(c): None for c in "▏▎▍▌▋▊▉"}) if console else shown
    return Text.assemble(shown, " ", (f"{left:,}", "bold"), f" of {limit:,} left")


class AccountPane(Pane):
    ID = "account"
    TITLE = "Account"
    KEYS = "f5,4"
    SECTION = "account"
    HOME = "#headers"
    FOLLOWS_CREDITS = True
    HELP = (
        "Plan, credits and limits (updated after every call that spends credits), the profile, "
        "and what the server sees."
    )
    DEFAULT_CSS = """
    AccountPane Horizontal { height: auto; }
    AccountPane #plan { width: 2fr; }
    AccountPane #profile { width: 1fr; }
    AccountPane #headers { height: auto; max-height: 16; border: round $primary 50%; }
    """

    def compose(self) -> ComposeResult:
        yield self.compose_error()
        with Horizontal():
            yield Facts("Plan and credits", id="plan")
            yield Facts("Profile", id="profile")
        yield Facts("Network", id="network")
        table = Table([Column("name", "Header", 18), Column("value", "Value", 20, rank=1, flex=True)], id="headers")
        table.border_title = "Headers the server saw"
        yield table

    def on_mount(self) -> None:
        for facts in self.query(Facts):
            facts.show([("", "waiting for the connection…")])

    async def load(self, clients: Clients) -> None:
        for facts in self.query(Facts):
            facts.show([("", "loading…")])
        try:
            info, profile, ip, headers = await asyncio.gather(
                clients.account.api_info(),
                clients.account.profile(),
                clients.tools.my_ip(),
                clients.tools.http_headers(),
            )
        except Exception:
            for facts in self.query(Facts):  # not "waiting for the connection" under a bar that says connected
                facts.show([("", "not loaded: the line above says why (r tries again)")])
            raise  # the app reports why
        limits = info.usage_limits
        self.query_one("#plan", Facts).show(
            [
                ("plan", safe_text(info.plan, "bold", one_line=True)),
                (
                    "query credits",
                    allowance(info.query_credits, limits.query_credits if limits else None, on_console(self.app)),
                ),
                (
                    "scan credits",
                    allowance(info.scan_credits, limits.scan_credits if limits else None, on_console(self.app)),
                ),
                ("monitored IPs", f"{info.monitored_ips:,}" if info.monitored_ips is not None else "-"),
                ("unlocked searches left", f"{info.unlocked_left:,}"),
                (
                    "https / telnet / unlocked",
                    f"{yes_no(info.https)} / {yes_no(info.telnet)} / {yes_no(info.unlocked)}",
                ),
            ]
        )
        self.query_one("#profile", Facts).show(
            [
                ("name", profile.display_name or "-"),
                ("member", yes_no(profile.member)),
                ("credits", f"{profile.credits:,}"),
                ("created", moment(profile.created)),
            ]
        )
        self.query_one("#network", Facts).show([("my IP", ip), ("endpoint", clients.transport.base_url)])
        table = self.query_one("#headers", Table)
        table.clear_records()
        for name, value in sorted(headers.items()):
            table.add_record(
                {"name": safe_text(name, one_line=True), "value": safe_text(value, one_line=True, max_chars=300)}
            )
