"""The service panel of the host pane, mounted alone, shown a hostile banner: markup in member
names and values stays literal text, odd types do not crash it, and the app keeps running."""

from __future__ import annotations

from textual.app import App, ComposeResult

from spyglass.models import Banner
from spyglass.present.host import host_facts
from spyglass.tui.panes.hostview import ServiceDetail
from spyglass.tui.widgets.facts import Facts
from tests.tui.helpers import screen_text

CLICK = "[@click=app.quit]"
HOSTILE = {
    "ip_str": "192.0.2.7",
    "port": 22,
    "transport": "tcp",
    "timestamp": "2026-01-02T03:04:05.000000",
    "product": "Open[b]SSH[/b]",
    "data": "SSH-2.0-x\\x1b[201~\r\n\x1b]52;c;cm0gLXJmIH4=\x07[/]\r\n",
    "ssh": {
        "type": "[red]ssh-rsa",
        "fingerprint": "\u202eaa:bb",
        "hassh": "h\u200bash",
        "kex": {CLICK: ["curve25519"], "[/]": ["[/]", "[@click=app.bell]x"], "languages": 7},
    },
    "vulns": {"CVE-2099-0001": {"cvss": "high", "summary": "[/]"}, "CVE-2099-0002": {"cvss": 9.8}, "CVE-2099-0003": {}},
}


class PanelApp(App):
    def __init__(self, banner: Banner) -> None:
        super().__init__()
        self.banner = banner

    def compose(self) -> ComposeResult:
        yield ServiceDetail()

    def on_mount(self) -> None:
        self.query_one(ServiceDetail).show(self.banner)


def where(text: str, needle: str) -> tuple[int, int]:
    for y, line in enumerate(text.splitlines()):
        if needle in line:
            return line.index(needle), y
    raise AssertionError(f"{needle!r} is not on the screen:\n{text}")


async def test_markup_in_a_banner_is_shown_and_clicking_it_does_nothing():
    app = PanelApp(Banner.model_validate(HOSTILE))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        for literal in (CLICK, "[/]", "[@click=app.bell]x", "Open[b]SSH[/b]", "[red]ssh-rsa", "CVE-2099-0001"):
            assert literal in text
        assert "\x1b" not in text and "\u202e" not in text and "\u200b" not in text
        # 9.8 sorts first; "high" and a missing CVSS come after, not a crash.
        assert text.index("CVE-2099-0002") < text.index("CVE-2099-0001")
        x, y = where(text, CLICK)
        await pilot.click(offset=(x + 3, y))
        await pilot.pause()
        assert app.is_running and app.return_code is None and app._exception is None


class HostApp(App):
    """The host summary and the service panel, fed raw JSON (the types no model promises)."""

    def __init__(self, record: dict) -> None:
        super().__init__()
        self.record = record

    def compose(self) -> ComposeResult:
        yield Facts("Host")
        yield ServiceDetail()

    def on_mount(self) -> None:
        self.query_one(Facts).show(host_facts(self.record))
        self.query_one(ServiceDetail).show(self.record["data"][0])


async def test_odd_types_and_huge_text_from_raw_json():
    banner = dict(
        HOSTILE,
        port=443,
        product=["not", "text"],
        version=4.99e36,
        data="x" * 1_000_000,
        ssl={"cert": {"serial": 2**70, "expired": "yes", "subject": "[/]"}, "versions": "TLSv1.2"},
        http={"status": "[/]", "components": ["[@click=app.quit]"], "title": 123},
        vulns=["CVE-2099-0009"],
        opts={"heartbleed": "[blink]VULNERABLE"},
    )
    record = {
        "ip_str": "192.0.2.7",
        "org": "[@click=app.quit] \x1b[201~",
        "asn": 13335,
        "hostnames": "one",
        "vulns": {"CVE-2099-0009": {}},
        "data": [banner],
    }
    app = HostApp(record)
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        for literal in (
            "[@click=app.quit] ␛[201~",
            "13335",
            "Service 443/tcp",
            "not, text 4.99e+36",
            str(2**70),
            "[blink]VULNERABLE",
            "CVE-2099-0009",
            "TLSv1.2",
        ):
            assert literal in text
        x, y = where(text, CLICK)
        await pilot.click(offset=(x + 3, y))
        await pilot.pause()
        assert app.is_running and app.return_code is None and app._exception is None
