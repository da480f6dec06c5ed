"""The body of an alert's create or edit, read: decoded, its networks counted and, where the plan's
alert networks an hour may pay for them, parsed into what the state keeps (:class:`StoredNetworks`).

An alert's list can be megabytes: decoding it, parsing each network and measuring them is pure
Python that held the interpreter, so every other account's notifications (matched and delivered in
the same process) waited behind an account that edits a large alert again and again. A large body
is read by :class:`BodyReader` in a process of its own, which hands back the few fields beside the
list and the networks as stored; a small one in a thread, by the same function. A body whose
networks the hour cannot pay for is counted, never parsed.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

from spyglass.netblocks import BadNetwork, parse_networks
from spyglass.server.state.alerts import StoredNetworks

LARGE = 256 << 10  # bytes of body from which it is read in the reader's process
FIELDS = ("name", "expires")  # what a create or edit reads beside its networks
NO_FILTERS = "filters: an object with 'ip', a list of IPs or CIDR ranges, is required"


@dataclass(frozen=True)
class ReadBody:
    """A create's or an edit's body: ``fields`` (its name and expires where given; None when the
    body is not a JSON object), how many networks it gives (``count``: 1 where ``filters.ip`` is
    not a list), and ``networks``: as stored, or why they cannot be (a 400's words), or None where
    they were not parsed (more than the hour could pay for). ``not_json``: why the body could not
    be decoded (then nothing else is read)."""

    fields: dict[str, Any] | None
    count: int
    networks: StoredNetworks | str | None
    not_json: str | None = None


def why_not_json(exc: ValueError | RecursionError) -> str:
    """Why a body is not JSON, in plain words, not Python's (which named sys.set_int_max_str_digits)."""
    if isinstance(exc, RecursionError):
        return "arrays or objects nested too deeply"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8"
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg.lower()} at line {exc.lineno}, column {exc.colno}"
    if "digits" in str(exc):
        return f"a number of more than {sys.get_int_max_str_digits():,} digits"
    return str(exc)


def read_body(raw: bytes, most: float) -> ReadBody:
    """``raw`` read, its networks parsed if they are no more than ``most``."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # (not JSON, not UTF-8, or nested past the stack)
        return ReadBody(None, 0, None, not_json=why_not_json(exc))
    filters = body.get("filters") if isinstance(body, dict) else None
    values = filters.get("ip") if isinstance(filters, dict) else None
    count = len(values) if isinstance(values, list) else 1
    fields = {k: body[k] for k in FIELDS if k in body} if isinstance(body, dict) else None
    return ReadBody(fields, count, networks_of(filters) if count <= most else None)


def networks_of(filters: object) -> StoredNetworks | str:
    if not isinstance(filters, dict) or "ip" not in filters:
        return NO_FILTERS
    try:
        return StoredNetworks.of(parse_networks(filters["ip"]))
    except BadNetwork as exc:
        return str(exc)


def _started(parent: int) -> None:
    """The reader's process goes with the backend, even one killed with SIGKILL; and it yields
    the cores to the backend's own work (other accounts' requests and notifications)."""
    if hasattr(os, "nice"):  # (not on Windows)
        os.nice(10)
    if sys.platform.startswith("linux"):
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the backend went before prctl took effect
        os._exit(1)


class BodyReader:
    """Reads bodies (:func:`read_body`): a large one in a process of its own, started at the first
    (a backend that never sees one starts none), a small one in a thread. A background service of
    the app's: its process ends when the backend stops."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    async def read(self, raw: bytes, most: float) -> ReadBody:
        if len(raw) < LARGE:
            return await asyncio.to_thread(read_body, raw, most)
        if self._pool is None:  # started from the event loop's thread, which lasts as long as the backend
            self._pool = ProcessPoolExecutor(
                1, mp_context=get_context("spawn"), initializer=_started, initargs=(os.getpid(),)
            )
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, read_body, raw, most)
        except BrokenProcessPool:  # its process was killed: this body here, the next in a new one
            self._pool = None
            return await asyncio.to_thread(read_body, raw, most)

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, cancel_futures=True)
