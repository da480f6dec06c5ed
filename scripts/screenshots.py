"""Regenerate screenshots/*.svg from the real dashboard against a local backend with synthetic
data (loopback only: the geo view pings 127.0.0.1).

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
SIZE = (140, 42)


async def shoot(profile) -> None:
    app = SpyglassApp(profile, theme="spyglass")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        async def save(name: str) -> None:
            no_blink(app)
            await pilot.pause()
            app.save_screenshot(f"{name}.svg", path=str(OUT))
            print(f"screenshots/{name}.svg")

        await pilot.press("slash")
        app.query_one("#query").value = 'http.title:"welcome to nginx" -country:US'
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("escape")
        await save("search")
        await pilot.press("enter")
        await settle(pilot)
        await save("host")
        app.open_pane("Geo").show_target("127.0.0.1")
        await settle(pilot)
        await save("geo")
        await pilot.press("alt+4")
        await settle(pilot)
        await save("account")
        await pilot.press("question_mark")
        await save("help")


def main() -> None:
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, backend_with(Path(tmp), generate(20_000, seed=1)) as backend:
        _, key = backend.store.create_account("analyst", "member", display_name="Ada Analyst")
        asyncio.run(shoot(backend.profile(key)))


if __name__ == "__main__":
    main()
