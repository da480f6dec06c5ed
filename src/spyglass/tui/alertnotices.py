"""Alert notices: a notification that fires for this account is said wherever the user is (the
status bar and a toast naming the alert, the triggers and the service; ctrl+o opens the host),
and, if the settings say so, with a terminal bell or a desktop notification (OSC 9 or OSC 777).

How the dashboard learns of them: the server decides what fires (its engine matches triggers with
the index's own compiler, and only alerts with a notifier attached fire), and it keeps each
alert's notification log (``/alert/{id}/notifications``). So the log is what is read; no second
matcher here could agree with the server's. Reading it costs a call per alert, so it is read when
something may have fired: a banner arrived on the ``/alert`` stream in that alert's networks (the
stream costs nothing while the networks are quiet), and every ``POLL_EVERY`` seconds for all
alerts (new alerts, the new_service trigger, and keys without the stream, which is enterprise).
What the log held when the dashboard started is not news: it is read first and not announced.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import re
import time
from typing import TYPE_CHECKING

from textual.app import App
from textual.binding import Binding

from spyglass.coverage import Coverage, spans_of
from spyglass.netblocks import Netblock, parse_netblock
from spyglass.safetext import clean
from spyglass.tui.messages import OpenHost
from spyglass.tui.widgets.statusbar import StatusBar

if TYPE_CHECKING:
    from textual.notifications import Notification

    from spyglass.client import Clients
    from spyglass.config import Config
    from spyglass.models import Alert

POLL_EVERY = 60.0  # seconds between readings of every alert's log
NUDGE_DELAY = 1.0  # seconds after a banner in an alert's networks: the engine matches, the notifier is tried
SIGNALS = {
    "off": "off",
    "bell": "terminal bell",
    "osc9": "desktop notification (OSC 9: iTerm2, WezTerm, kitty, Windows Terminal)",
    "osc777": "desktop notification (OSC 777: foot, Ghostty, urxvt, VTE)",
}


def signal_text(signal: str) -> str:
    """How a fired alert is said with ``signal``, for the settings."""
    extra = SIGNALS.get(signal, "off")
    return "said on screen" + ("" if extra == "off" else f", with a {extra}")


def signal_problems(signal: str) -> list[str]:
    """What is wrong with the configured signal, for the start (one unknown was passed over in
    silence, where an unknown theme or key is said: newcomer trials 17 and 18)."""
    if signal in SIGNALS:
        return []
    given = clean(signal, one_line=True, max_chars=40)
    return [f"alert_signal: {given!r} is none of {', '.join(SIGNALS)}: a fired alert is said on screen only"]


OSC_TEXT = 200  # characters of a desktop notification's text


def osc_notification(title: str, body: str, kind: str, tmux: bool = False) -> str:
    """The escape sequence that asks the terminal for a desktop notification. Every control
    character of the (untrusted) text goes, so nothing in it can end the sequence or start
    another, nor reorder what the desktop shows (safetext's one path: bidi controls, lone
    surrogates); in tmux it is wrapped in a passthrough (tmux needs ``allow-passthrough on``)."""
    title = clean(title, one_line=True)[:OSC_TEXT].strip()
    body = clean(body, one_line=True)[:OSC_TEXT].strip()
    if kind == "osc777":  # fields are separated by ';': the title must hold none
        sequence = f"\x1b]777;notify;{title.replace(';', ',')};{body}\x1b\\"
    else:
        text = f"{title}: {body}" if title else body
        if re.match(r"\d+;", text):  # OSC 9;4;... is a progress report in some terminals
            text = " " + text
        sequence = f"\x1b]9;{text}\x1b\\"
    if tmux:
        sequence = "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return sequence


class Notice:
    """One fired notification, as the log said it (every member untrusted)."""

    def __init__(self, alert: str, triggers: list[str], service: str) -> None:
        self.alert, self.triggers, self.service = alert, triggers, service

    @property
    def address(self) -> str:
        host, _, _ = self.service.rpartition(":")
        return host.strip("[]")

    @property
    def port(self) -> str:
        _, _, port = self.service.rpartition(":")
        return port if port.isdigit() else ""

    def text(self) -> str:
        triggers = ", ".join(self.triggers) or "a trigger"
        return clean(f"{self.alert}: {triggers} on {self.service}", one_line=True, max_chars=160)


class AlertNotices(App[None]):
    """The dashboard's part that follows its alerts (a base of the app class)."""

    BINDINGS = [Binding("ctrl+o", "open_alerted_host", "Open the alerted host", show=False, id="alert.open")]

    config: Config  # the app's: its alert_signal, one of SIGNALS
    last_notice: Notice | None = None

    _watching: asyncio.Task | None = None
    _alert_toast: Notification | None = None  # the toast that says the alerts fired last
    _alert_count = 0  # how many it counts
    notice_watch: NoticeWatch | None = None

    def follow_alerts(self, clients: Clients) -> None:
        """Start (or restart, on a new connection) following the account's notifications. A task,
        not a worker: it runs for as long as the connection, and a worker is a call that ends."""
        if self._watching is not None:
            self._watching.cancel()
        self._watching = asyncio.create_task(self._follow_alerts(clients), name="alert notices")

    async def _follow_alerts(self, clients: Clients) -> None:
        from spyglass.client import SpyglassError

        # No alerts method here, or the connection closed (a new one restarts this): nothing to say.
        self.notice_watch = NoticeWatch(clients, self.announce)
        with contextlib.suppress(SpyglassError, RuntimeError):
            await self.notice_watch.run()

    async def on_unmount(self) -> None:
        if self._watching is not None:
            self._watching.cancel()

    def announce(self, notices: list[Notice]) -> None:
        if not notices:
            return
        self.last_notice = notices[-1]
        keys = getattr(self, "keymap", {}).get("alert.open", "ctrl+o")  # as the user's keymap has it
        key = self.get_key_display(Binding(keys.split(",")[0].strip(), ""))
        self.toast_alerts(notices[-1], len(notices), key)
        for status in self.query(StatusBar):
            status.notice = f"alert {notices[-1].text()} ({key} opens the host)"
        self.signal(notices[-1])
        # An alert the Alerts pane does not list (made elsewhere since it read them) is read now, if
        # in view, else when shown (trial 26: "Alert fired / lo" above its "No alert yet").
        for pane in self.query("AlertsPane"):
            if {n.alert for n in notices} - {a.name for a in getattr(pane, "alerts", {}).values()}:
                pane.stale = True  # type: ignore[attr-defined]
                if pane is self.current_pane():  # type: ignore[attr-defined]
                    pane.reload()

    def toast_alerts(self, newest: Notice, count: int, key: str) -> None:
        """One toast for the alerts that fired, the newest named: it replaces the one still shown
        for earlier ones and counts them too (at 80x24 three toasts a reading filled the screen)."""
        from textual.notifications import Notification, Notify

        shown, self._alert_toast = self._alert_toast, None
        if shown is not None and shown in self._notifications:
            count += self._alert_count
            self._unnotify(shown)
        self._alert_count = count
        title = "Alert fired" if count == 1 else f"{count} alerts fired"
        more = f" (and {count - 1} more: the Alerts pane has each)" if count > 1 else ""
        toast = Notification(f"{newest.text()}{more}\n{key} opens the host", title, "information", 15, markup=False)
        self._alert_toast = toast
        self.post_message(Notify(toast))

    def signal(self, notice: Notice) -> None:
        """Beyond the screen, as the settings say: the bell, or a desktop notification."""
        chosen, driver = self.config.alert_signal, self._driver
        if chosen == "bell":
            self.bell()
        elif chosen in ("osc9", "osc777") and driver is not None:
            tmux = bool(os.environ.get("TMUX"))
            driver.write(osc_notification("spyglass alert", notice.text(), chosen, tmux))

    def action_open_alerted_host(self) -> None:
        if self.last_notice is not None and self.last_notice.address:
            self.post_message(OpenHost(self.last_notice.address, self.last_notice.port))  # on its service
        else:  # (it did nothing and said nothing: newcomer trial 28)
            self.notify("No alert has fired since the dashboard started: ctrl+o opens the last one's host")


class NoticeWatch:
    """Reads the account's notification logs when something may have fired; hands what is new
    to ``announce``."""

    def __init__(self, clients: Clients, announce) -> None:
        self.clients, self.announce = clients, announce
        self.alerts: dict[str, Alert] = {}
        self.seen: dict[str, set[str]] = {}  # alert id -> the events of its log when last read
        self.covering: Coverage[str] = Coverage(())  # alert ids by their networks: a bisection a banner
        self.nudged: set[str] = set()
        self.unknown = False  # a banner in no alert known: the list of alerts is read again
        self.wake = asyncio.Event()
        self.ready = False  # the logs as they were at the start are read: what comes next is news

    async def run(self) -> None:
        wait = NUDGE_DELAY
        while not await self.tried(self.read(announce=False)):
            await asyncio.sleep(wait)
            wait = min(POLL_EVERY, 2 * wait)
        self.ready = True
        follower = asyncio.create_task(self.follow_stream())
        try:
            next_poll = time.monotonic() + POLL_EVERY
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), max(0.0, next_poll - time.monotonic()))
                if self.wake.is_set():
                    await asyncio.sleep(NUDGE_DELAY)  # banners come in bursts: one reading for them
                    self.wake.clear()
                    nudged, self.nudged = self.nudged, set()
                    unknown, self.unknown = self.unknown, False
                    if not await self.tried(self.read(only=nudged, relist=unknown)):
                        self.nudged |= nudged  # read at the next poll: what fired is said then
                if time.monotonic() >= next_poll:
                    await self.tried(self.read())
                    next_poll = time.monotonic() + POLL_EVERY
        finally:
            follower.cancel()

    @staticmethod
    async def tried(reading) -> bool:
        """Whether a reading went through. One refused for now or dropped (a 429 of the account's
        requests at once while panes load, a dropped connection, a 5xx) is tried again later: it ended
        the watch, and the dashboard said no alert again until it reconnected. A refusal that lasts
        (no alerts for this key or service) ends it, as does the connection's end (RuntimeError)."""
        from spyglass.client.errors import RateLimited, ServerError, TransportError

        try:
            await reading
        except (RateLimited, ServerError, TransportError):
            return False
        return True

    async def follow_stream(self) -> None:
        """Banners in the alerts' networks: which alert's log to read soon."""
        from spyglass.client import SpyglassError
        from spyglass.client.streamparse import StreamBanner

        # Not an enterprise key, or the connection closed: the periodic reading does without.
        with contextlib.suppress(SpyglassError, RuntimeError):
            async for item in self.clients.stream.alert():
                if isinstance(item, StreamBanner):
                    self.nudge(item.address)

    def nudge(self, address: str | None) -> None:
        try:
            ip = ipaddress.ip_address(address or "")
        except ValueError:
            return
        hit = set(self.covering.covering(ip))
        self.nudged |= hit
        self.unknown = self.unknown or not hit  # in no alert known: one made since the list was read
        self.wake.set()

    async def read(self, only: set[str] | None = None, announce: bool = True, relist: bool = False) -> None:
        """Read the logs of ``only`` these alerts (all, and the list of alerts again, with None);
        with ``relist``, the list again and the logs of the alerts new in it too."""
        if only is None or relist:
            self.alerts = {a.id: a for a in await self.clients.alerts.list()}
            self._cover()
        if only is not None and relist:
            only = only | (set(self.alerts) - set(self.seen))
        from spyglass.client.errors import NotFound

        new: list[Notice] = []
        for alert_id in sorted(self.alerts if only is None else only & set(self.alerts)):
            try:
                log = await self.clients.alerts.notifications(alert_id)
            except NotFound:  # deleted since the list was read (a banner in its networks came just
                # before): it ended the watch, and no alert was said again until the dashboard restarted
                self.forget(alert_id)
                continue
            known = self.seen.get(alert_id, set())  # none for an alert made since the start: all is news
            fresh: dict[str, Notice] = {}
            for n in reversed(log):  # oldest first; one notice per event, whatever its notifiers
                if n.event not in known and n.event not in fresh:
                    fresh[n.event] = Notice(self.alerts[alert_id].name, n.triggers, n.service or "")
            new += fresh.values()
            self.seen[alert_id] = {n.event for n in log}  # the log keeps the newest: so does this
        if announce:
            self.announce(new)

    def forget(self, alert_id: str) -> None:
        self.alerts.pop(alert_id, None)
        self.seen.pop(alert_id, None)
        self._cover()

    def _cover(self) -> None:
        self.covering = Coverage((i, spans_of(_networks(a))) for i, a in self.alerts.items())


def _networks(alert: Alert) -> list[Netblock]:
    out = []
    for text in alert.filters.ip or []:
        with contextlib.suppress(ValueError):
            out.append(parse_netblock(text))
    return out
