"""server/gates.py: holders of one key enter one at a time, other keys meanwhile; nothing is kept
once all have left."""

from __future__ import annotations

import asyncio

from spyglass.server import gates
from spyglass.server.gates import one_at_a_time


async def test_one_key_at_a_time_and_others_meanwhile():
    inside: dict[str, int] = {"a": 0, "b": 0}
    most: dict[str, int] = {"a": 0, "b": 0}
    both = asyncio.Event()

    async def hold(key: str) -> None:
        async with one_at_a_time(("alerts", key)):
            inside[key] += 1
            most[key] = max(most[key], inside[key])
            if inside["a"] and inside["b"]:
                both.set()
            await asyncio.sleep(0)  # others run meanwhile: only the same key's wait
            await asyncio.wait_for(both.wait(), timeout=30) if key == "b" else None
            inside[key] -= 1

    await asyncio.gather(*(hold(k) for k in ["a"] * 8 + ["b"]))
    assert most == {"a": 1, "b": 1} and both.is_set()
    assert not [name for name in gates._gates if name[0] == id(asyncio.get_running_loop())]
