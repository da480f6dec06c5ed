"""The connect pass of a scan (server/scanner/sweep.py) against real loopback sockets."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Iterator

import pytest

from spyglass.server.scanner.sweep import Pace, Slots, connect_sweep
from tests import scanservers as ss


@contextlib.contextmanager
def listeners(count: int, backlog: int = 16) -> Iterator[list[socket.socket]]:
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            s.listen(backlog)
            socks.append(s)
        yield socks
    finally:
        for s in socks:
            s.close()


@contextlib.contextmanager
def unanswered_port() -> Iterator[int]:
    """A port whose connects never complete: its listener's accept queue is full (nothing accepts),
    so later SYNs go unanswered, as a filtering firewall does."""
    with listeners(1, backlog=0) as (full,):
        port = full.getsockname()[1]
        fillers = [socket.socket() for _ in range(8)]
        try:
            for f in fillers:
                f.setblocking(False)
                f.connect_ex(("127.0.0.1", port))
            yield port
        finally:
            for f in fillers:
                f.close()


async def test_open_ports_are_told_from_closed_ones():
    with listeners(5) as open_:
        ports = [s.getsockname()[1] for s in open_]
        # released ports chosen while the listeners hold theirs: one released before they bound
        # could be the port one of them was then given (a CI run saw it)
        closed = [ss.closed_port().port for _ in range(50)]
        targets = [("127.0.0.1", p) for p in closed[:25] + ports + closed[25:]]
        slots = Slots(8)
        result = await connect_sweep(targets, slots, timeout=1.0)
    assert [p for (_, p), is_open in zip(targets, result, strict=True) if is_open] == ports
    assert slots.free == slots.limit  # every socket given back


async def test_the_cap_on_open_connections_holds():
    """Slots taken by others (the modules of other scans) are not used; the sweep waits for them."""
    slots = Slots(4)
    for _ in range(4):
        assert slots.take_nowait()
    with listeners(3) as open_:
        targets = [("127.0.0.1", s.getsockname()[1]) for s in open_]
        sweep = asyncio.ensure_future(connect_sweep(targets, slots, timeout=1.0))
        await asyncio.sleep(0.2)
        assert not sweep.done()  # no slot: nothing connected yet
        slots.give()
        assert await asyncio.wait_for(sweep, 10) == [True, True, True]
    assert slots.free == 1


async def test_a_connect_that_never_completes_times_out_as_filtered():
    with unanswered_port() as port:
        await asyncio.sleep(0.1)
        result = await asyncio.wait_for(connect_sweep([("127.0.0.1", port)], Slots(2), timeout=0.3), 10)
    assert result == [False]


async def test_a_connect_that_timed_out_is_tried_again_before_the_port_is_called_closed():
    """A SYN dropped once (the listener's accept queue full for a moment, as under load) must not
    hide an open port: nmap retransmits its probes, and the sweep tries a timed-out connect again."""
    with listeners(1, backlog=0) as (listener,):
        port = listener.getsockname()[1]
        fillers = [socket.create_connection(("127.0.0.1", port), timeout=5)]  # the accept queue is full
        sweep = asyncio.ensure_future(connect_sweep([("127.0.0.1", port)], Slots(2), timeout=0.4))
        await asyncio.sleep(0.2)  # the sweep's first SYN went unanswered
        fillers.append(listener.accept()[0])  # room again, before the first connect times out
        try:
            assert await asyncio.wait_for(sweep, 10) == [True]
        finally:
            for f in fillers:
                f.close()


async def test_cancelling_closes_every_socket():
    with unanswered_port() as port:
        slots = Slots(16)
        sweep = asyncio.ensure_future(connect_sweep([("127.0.0.1", port)] * 8, slots, timeout=30))
        await asyncio.sleep(0.2)
        sweep.cancel()
        with pytest.raises(asyncio.CancelledError):
            await sweep
    assert slots.free == slots.limit


async def test_ipv6_loopback():
    try:
        s = socket.socket(socket.AF_INET6)
        s.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    with s:
        s.listen(4)
        port = s.getsockname()[1]
        assert await connect_sweep([("::1", port)], Slots(2), timeout=1.0) == [True]


async def test_unanswered_connects_widen_the_window():
    """Targets that answer at once are swept a few at a time; slow ones many at once, up to the cap."""
    from spyglass.server.scanner.sweep import START_WINDOW

    with unanswered_port() as port:
        slots = Slots(4 * START_WINDOW)
        sweep = asyncio.ensure_future(connect_sweep([("127.0.0.1", port)] * (8 * START_WINDOW), slots, timeout=0.5))
        most = 0
        while not sweep.done():
            most = max(most, slots.limit - slots.free)
            await asyncio.sleep(0.01)
    assert not any(await sweep)
    assert most == slots.limit


def test_the_pace_gives_a_tick_of_connects_at_its_rate_and_saves_none_up():
    now = [0.0]
    pace = Pace(10_000, clock=lambda: now[0])
    now[0] = 16.0  # long idle: still only a tick's worth
    assert pace.take(100_000) == 500
    assert pace.take(1) == 0
    now[0] += 1 / 32
    assert pace.take(1_000) == 312


def test_a_late_loop_slows_the_pace_to_its_floor_and_a_punctual_one_restores_it():
    pace = Pace(20_000)
    for _ in range(10):
        pace.ran_late(0.05)
    assert pace.rate == Pace.FEWEST
    for _ in range(40):
        pace.ran_late(0.001)
    assert pace.rate == 20_000


async def test_a_sweep_yields_to_a_busy_loop():
    """While something else holds the loop 30 ms at a time, a sweep's ticks run late: the pace it
    shares with every scan falls to its floor (two internet scans took a whole core beside a
    flood of requests, and another account's p95 from 0.6 to 2.4 s)."""
    pace, busy = Pace(20_000), asyncio.Event()

    async def hog() -> None:
        while not busy.is_set():
            time.sleep(0.03)  # a request's work on the loop
            await asyncio.sleep(0)

    closed = [("127.0.0.1", ss.closed_port().port)] * 2_000
    hogging = asyncio.ensure_future(hog())
    try:
        result = await asyncio.wait_for(connect_sweep(closed, Slots(64), timeout=1.0, pace=pace), 60)
    finally:
        busy.set()
        await hogging
    assert not any(result) and pace.rate < 20_000 / 8
