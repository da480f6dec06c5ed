"""What the backend's background services share about their asyncio tasks."""

from __future__ import annotations

import asyncio
import contextlib


async def cancel(task: asyncio.Task | None) -> None:
    """Cancel ``task`` and wait until it has ended (the CancelledError it ends with is expected)."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
