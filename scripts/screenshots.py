"""Regenerate screenshots/*.svg from the real dashboard against a local backend with synthetic
data (loopback only: the geo view pings 127.0.0.1): each pane at 140x42, and at 80x24 in the
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
from spyglass.tui.panes.base import PingTarget, RunSearch  # noqa: E402
from tests.conftest import backend_with  # noqa: E402
from tests.tui.helpers import no_blink, settle  # noqa: E402

OUT = ROOT / "screenshots"
RUNS = [((140, 42), "spyglass", ""), ((80, 24), "spyglass", "-80x24"), ((80, 24), "spyglass-16", "-16-colours")]


async def shoot(profile, size: tuple[int, int], theme: str, suffix: str) -> None:
    app = SpyglassApp(profile, theme=theme)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)

        async def save(name: str) -> None:
            no_blink(app)
            await pilot.pause()
            app.save_screenshot(f"{name}{suffix}.svg", path=str(OUT))
            print(f"screenshots/{name}{suffix}.svg")

        app.post_message(RunSearch('http.title:"welcome to nginx" -country:US'))
        await settle(pilot)
        await pilot.press("escape")
        await save("search")
        await pilot.press("enter")
        await settle(pilot)
        await save("host")
        app.post_message(PingTarget("127.0.0.1"))
        await settle(pilot)
        await pilot.press("escape")
        await save("geo")
        await pilot.press("f5")
        await settle(pilot)
        await save("account")
        await pilot.press("f1")
        await save("help")


def main() -> None:
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, backend_with(Path(tmp), generate(20_000, seed=1)) as backend:
        _, key = backend.store.create_account("analyst", "member", display_name="Ada Analyst")
        for size, theme, suffix in RUNS:
            asyncio.run(shoot(backend.profile(key), size, theme, suffix))


if __name__ == "__main__":
    main()
