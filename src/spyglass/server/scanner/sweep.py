"""The connect pass: which of many ``(address, port)`` targets accept a TCP connection.

A scan first sweeps its targets with bare non-blocking connects, many in flight, each with a short
timeout and nothing more for a closed port; protocol modules then run on the open ports only (as
``nmap -sT`` does). The sweep's sockets sit in a poller of its own (epoll on Linux), whose one
descriptor the event loop watches: each wake-up handles every connect that ended, with no stream,
task, future or loop callback per target (that bookkeeping, not the network, was the cost of a
closed port before).
"""

from __future__ import annotations

import asyncio
import errno
import select
import selectors
import socket
import time
from _socket import socket as c_socket
from collections.abc import Callable, Sequence

# The C socket type, created non-blocking where the platform can (one system call fewer a target):
# the sweep needs nothing of socket.socket's Python wrapper.
NONBLOCKING = getattr(socket, "SOCK_NONBLOCK", 0)
CONNECT_TIMEOUT = 1.5  # seconds, at most, for a connect in the sweep (capped by the scan's timeout)
TICK = 0.05  # seconds between checks for expired connects and freed slots
# Connects in flight at first: enough for targets that answer at once (a LAN, loopback), where more
# only costs the kernel and us. Doubled at each tick that finds connects still unanswered (distant
# or filtered targets), up to the scans' cap on open connections, as nmap grows its window.
START_WINDOW = 64
# A connect that timed out is tried once more before its port is called closed, as nmap retransmits
# its probes: a SYN dropped once (a full accept queue, a loaded machine) must not hide an open port.
TRIES = 2


class Pace:
    """How many connects a second all scans together may start: at most ``most``, and less while
    the event loop is late, so that a scan yields the server's one loop to the requests of every
    account. Two internet scans of loopback took a whole core and, beside a flood of keyless
    requests, another account's p95 from 0.6 s to 2.4 s. Each sweep tells it how late its tick
    ran: a late tick halves the rate (down to ``FEWEST``, so a scan always moves), a punctual one
    raises it by a quarter (back to ``most`` within a second or so)."""

    FEWEST = 500  # connects a second, however busy the loop
    LATE = 0.02  # seconds past its time a tick must run for the loop to be called busy

    def __init__(self, most: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.most = max(self.FEWEST, most)
        self.rate = float(self.most)
        self.clock = clock
        self.tokens = 0.0
        self.filled = clock()

    def take(self, wanted: int) -> int:
        """Up to ``wanted`` connects that may start now (maybe none); the rest of a tick's worth
        is not saved up past it."""
        now = self.clock()
        self.tokens = min(self.tokens + self.rate * (now - self.filled), self.rate * TICK)
        self.filled = now
        taken = max(0, min(wanted, int(self.tokens)))
        self.tokens -= taken
        return taken

    def give(self, count: int) -> None:
        self.tokens += count

    def ran_late(self, seconds: float) -> None:
        if seconds > self.LATE:
            self.rate = max(self.FEWEST, self.rate / 2)
        else:
            self.rate = min(self.most, self.rate * 1.25)


class Slots:
    """A cap on the open connections of all scans: taken without waiting by the sweep (one per
    socket, from selector callbacks) and with waiting by the protocol modules."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.free = self.limit
        self._waiters: list[asyncio.Future[None]] = []

    def take_nowait(self, most: int = 1) -> int:
        """Up to ``most`` slots taken at once (how many: maybe none)."""
        taken = min(most, self.free)
        if taken > 0:
            self.free -= taken
            return taken
        return 0

    async def take(self) -> None:
        while not self.take_nowait():
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def give(self, count: int = 1) -> None:
        self.free += count
        woken = 0
        while self._waiters and woken < self.free:
            waiter = self._waiters.pop(0)
            if not waiter.done():
                waiter.set_result(None)
                woken += 1

    async def __aenter__(self) -> None:
        await self.take()

    async def __aexit__(self, *_exc: object) -> None:
        self.give()


async def connect_sweep(
    targets: Sequence[tuple[str, int]], slots: Slots, timeout: float, pace: Pace | None = None
) -> list[bool]:
    """For each target, whether it accepted a TCP connection within ``timeout`` seconds; connects
    started no faster than ``pace`` allows, if given."""
    return await _Sweep(targets, slots, timeout, pace).run()


class _Poller:
    """The sockets whose connect is under way: epoll where there is one, else the platform's selector."""

    def __init__(self) -> None:
        self.epoll = select.epoll() if hasattr(select, "epoll") else None
        self.selector = None if self.epoll else selectors.DefaultSelector()

    def fileno(self) -> int:
        return self.epoll.fileno() if self.epoll else self.selector.fileno()  # type: ignore[union-attr]

    def add(self, fd: int) -> None:
        if self.epoll:
            self.epoll.register(fd, select.EPOLLOUT)
        else:
            self.selector.register(fd, selectors.EVENT_WRITE)  # type: ignore[union-attr]

    def remove(self, fd: int) -> None:
        """Before closing ``fd`` (epoll forgets a closed descriptor by itself)."""
        if self.selector:
            self.selector.unregister(fd)

    def ready(self) -> list[int]:
        if self.epoll:
            return [fd for fd, _ in self.epoll.poll(0)]
        return [key.fd for key, _ in self.selector.select(0)]  # type: ignore[union-attr]

    def close(self) -> None:
        (self.epoll or self.selector).close()  # type: ignore[union-attr]


class _Sweep:
    def __init__(self, targets: Sequence[tuple[str, int]], slots: Slots, timeout: float, pace: Pace | None) -> None:
        self.targets = targets
        self.slots = slots
        self.pace = pace
        self.timeout = timeout
        self.open = [False] * len(targets)
        self.next = 0  # the next target to connect to
        self.again: list[int] = []  # targets whose connect timed out, to be tried once more
        self.tries = bytearray(len(targets))  # connects made to each target
        self.window = min(START_WINDOW, slots.limit)  # connects in flight, at most
        self.pending: dict[int, tuple[c_socket, int, float]] = {}  # fd -> (socket, target, deadline)
        self.poller = _Poller()
        self.loop = asyncio.get_running_loop()
        self.done: asyncio.Future[None] = self.loop.create_future()
        self.tick_handle: asyncio.TimerHandle | None = None
        self.tick_due = 0.0  # when the next tick was asked for (loop time)

    async def run(self) -> list[bool]:
        self.loop.add_reader(self.poller.fileno(), self._ready)
        try:
            self._tick()
            await self.done
        finally:  # also when cancelled (the server stopping): no socket or callback left behind
            self.loop.remove_reader(self.poller.fileno())
            if self.tick_handle is not None:
                self.tick_handle.cancel()
            for fd in list(self.pending):
                self._end(fd)
            self.poller.close()
        return self.open

    def _fill(self) -> None:
        # The hot path of a scan: a few microseconds a target, so slots are taken in bulk and
        # attributes read once.
        targets, pending, add, result, again, tries = (
            self.targets, self.pending, self.poller.add, self.open, self.again, self.tries
        )  # fmt: skip
        wanted = min(len(targets) - self.next + len(again), self.window - len(pending))
        allowed = self.pace.take(wanted) if self.pace else wanted
        room = self.slots.take_nowait(allowed)
        if self.pace:
            self.pace.give(allowed - room)
        deadline = time.monotonic() + self.timeout
        given = 0
        while room > 0:
            position = self.next if self.next < len(targets) else again[-1]
            ip, port = targets[position]
            try:
                sock = c_socket(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM | NONBLOCKING)
            except OSError:  # out of descriptors: this target again once connects have ended
                break
            if position == self.next:
                self.next += 1
            else:
                again.pop()
            tries[position] += 1
            room -= 1
            if not NONBLOCKING:
                sock.setblocking(False)
            code = sock.connect_ex((ip, port))
            if code == errno.EINPROGRESS or code == errno.EAGAIN:
                fd = sock.fileno()
                pending[fd] = (sock, position, deadline)
                add(fd)
            else:  # answered at once
                result[position] = code == 0 and not _connected_to_itself(sock)
                sock.close()
                given += 1
        self.slots.give(given + room)
        if self.next >= len(targets) and not again and not pending and not self.done.done():
            self.done.set_result(None)

    def _ready(self) -> None:
        pending, result, remove = self.pending, self.open, self.poller.remove
        ready = self.poller.ready()
        for fd in ready:
            sock, position, _ = pending.pop(fd)
            error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            result[position] = error == 0 and not _connected_to_itself(sock)
            remove(fd)
            sock.close()
        self.slots.give(len(ready))
        self._fill()

    def _end(self, fd: int) -> int:
        """Give up the connect on ``fd`` (its target stays closed unless tried again); its target."""
        sock, position, _ = self.pending.pop(fd)
        self.poller.remove(fd)
        sock.close()
        self.slots.give()
        return position

    def _tick(self) -> None:
        """Expire connects past their deadline (filtered), and take slots that others gave back."""
        if self.pace and self.tick_due:
            self.pace.ran_late(self.loop.time() - self.tick_due)
        now = time.monotonic()
        started_before = now + self.timeout - TICK  # the deadline of a connect started a tick ago
        if any(deadline <= started_before for _, _, deadline in self.pending.values()):
            self.window = min(2 * self.window, self.slots.limit)  # slow targets: more of them at once
        self._ready()  # a connect that completed while the loop was busy is not expired unread
        for fd in [fd for fd, (_, _, deadline) in self.pending.items() if deadline <= now]:
            if self.tries[position := self._end(fd)] < TRIES:
                self.again.append(position)
        self._fill()
        if not self.done.done():
            self.tick_due = self.loop.time() + TICK
            self.tick_handle = self.loop.call_at(self.tick_due, self._tick)


def _connected_to_itself(sock: c_socket) -> bool:
    """A connect to a loopback port in the ephemeral range can be given that very port as its own
    source and "succeed" by TCP simultaneous open: nothing listens there."""
    try:
        return sock.getsockname()[:2] == sock.getpeername()[:2]
    except OSError:
        return False
