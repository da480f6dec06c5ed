"""Regenerate screenshots/*.svg from the real dashboard against a local backend with synthetic
data (loopback only: the geo view pings 127.0.0.1): every pane at 140x42, and at 80x24 in the
default theme and in 16 colours (what a plain terminal over SSH shows).

    python scripts/screenshots.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spyglass.datagen import generate  # noqa: E402
from spyglass.tui.app import SpyglassApp  # noqa: E402
from tests.conftest import backend_with  # noqa: E402
from tests.tui.helpers import no_blink, settle  # noqa: E402

OUT = ROOT / "screenshots"
RUNS = [((140, 42), "spyglass", ""), ((80, 24), "spyglass", "-80x24"), ((80, 24), "spyglass-16", "-16-colours")]


# Each pane, with what it is given to show (None: what it shows when opened); the stream comes
# last: it follows the live stream until the app closes.
VISITS: list[tuple[str, str | None]] = [
    ("search", 'http.title:"welcome to nginx" -country:US'),
    ("host", None),  # Enter on the search's first result
    ("geo", "127.0.0.1"),
    ("account", None),
    ("org", None),
    ("scans", "127.0.0.1/30"),
    ("alerts", None),
    ("notifiers", None),
    ("trends", "port:22"),
    ("directory", None),
    ("dns", "aurora-tv.example"),
    ("data", None),
    ("stream", None),
]


async def prepare(profile) -> None:
    """What the alerts and notifiers panes show: an alert with a trigger and a notifier."""
    from spyglass.client import Clients

    async with Clients.from_profile(profile) as clients:
        hook = await clients.notifiers.create("webhook", {"url": "http://127.0.0.1:9/hook"}, description="ops")
        alert = await clients.alerts.create("office", ["198.18.0.0/24"])
        await clients.alerts.enable_triggers(alert.id, "new_service")
        await clients.alerts.add_notifier(alert.id, hook.id)


async def shoot(backend, profile, size: tuple[int, int], theme: str, suffix: str) -> None:
    app = SpyglassApp(profile, theme=theme)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)

        async def save(name: str) -> None:
            no_blink(app)
            await pilot.pause()
            app.save_screenshot(f"{name}{suffix}.svg", path=str(OUT))
            print(f"screenshots/{name}{suffix}.svg")

        for pane_id, arg in VISITS:
            if pane_id == "host":
                await pilot.press("escape", "enter")
            else:
                pane = await app.show_pane(pane_id)
                if arg is not None and pane is not None:
                    pane.run_arg(arg)
            if pane_id == "stream":  # it never settles: once it follows the stream, banners are published
                for _ in range(300):
                    if pane is not None and pane.state is not None and pane.state.status == "connected":
                        break
                    await pilot.pause(0.05)
                backend.collect([dict(b) for b in generate(12, seed=len(suffix) + 7)])  # new to each run
                await pilot.pause(1.5)
            else:
                await settle(pilot)
            await save(pane_id)
        await pilot.press("f1")
        await pilot.pause(0.5)
        await save("help")


def main() -> None:
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, backend_with(Path(tmp), generate(20_000, seed=1)) as backend:
        _, key = backend.store.create_account("analyst", "enterprise", display_name="Ada Analyst")
        asyncio.run(prepare(backend.profile(key)))
        for size, theme, suffix in RUNS:
            asyncio.run(shoot(backend, backend.profile(key), size, theme, suffix))


if __name__ == "__main__":
    main()
