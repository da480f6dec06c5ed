"""Ping from this machine: unprivileged ICMP where the system allows it, raw sockets otherwise."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor

from icmplib import SocketPermissionError
from icmplib import ping as icmp_ping

from spyglass.models import GeoLocation, PingResult
from spyglass.netools.dns import Resolver
from spyglass.netools.targets import is_ip

NOT_PERMITTED = (
    "ICMP is not permitted here: allow unprivileged ping with "
    '`sysctl -w net.ipv4.ping_group_range="0 2147483647"`, or run the agent as root '
    "or with CAP_NET_RAW (`setcap cap_net_raw+ep $(readlink -f $(which python3))`)"
)


class PingFailed(Exception):
    """The ping could not be attempted at all; the message says why in words."""


class NotMeasured(PingFailed):
    """The target lies in a network this agent does not measure: nothing was sent to it."""


async def ping(
    target: str,
    location: GeoLocation,
    *,
    resolver: Resolver | None = None,
    count: int = 3,
    interval: float = 0.2,
    timeout: float = 1.0,
    permitted: Callable[[str], bool] | None = None,
    executor: Executor | None = None,
) -> PingResult:
    """Ping ``target`` ``count`` times. RTTs are milliseconds; ``packet_loss`` is a fraction 0..1.

    A hostname is resolved first, with ``resolver`` (the agent's own DNS settings), and never
    inside the timed part. An unreachable target is an answer (``is_alive`` false), not an error.
    When neither unprivileged nor raw ICMP sockets are permitted, the result carries ``error``.
    An address ``permitted`` refuses is :class:`NotMeasured`, before any packet. The probe runs
    in ``executor`` (None: the loop's default one).
    """
    address = target if is_ip(target) else await (resolver or Resolver()).address_of(target)
    if address is None:
        raise PingFailed(f"cannot resolve {target}")
    if permitted is not None and not permitted(address):
        if not is_ip(target):  # said as a name that does not resolve: no one learns which names are internal
            raise NotMeasured(f"cannot resolve {target}")
        raise NotMeasured(f"{target} is in a network this agent does not measure")
    # The probes run in a thread of their own. On the event loop a reply's time was taken when
    # the loop got round to it: the first probe, sent while a geo form's other requests, a first
    # import or a render keep the loop busy, came back tens of milliseconds late.
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(executor, probe, address, location, count, interval, timeout)


def probe(address: str, location: GeoLocation, count: int, interval: float, timeout: float) -> PingResult:
    """Ping an IP address (blocking): only the echo requests and their replies are timed."""
    host = None
    for privileged in (False, True):
        try:
            host = icmp_ping(address, count=count, interval=interval, timeout=timeout, privileged=privileged)
            break
        except SocketPermissionError:
            continue
        except OSError as exc:  # e.g. no route to an IPv6 target on an IPv4-only host
            return _failed(address, location, f"cannot send ICMP to {address}: {exc.strerror or exc}")
    if host is None:
        return _failed(address, location, NOT_PERMITTED)
    rtts = [round(r, 3) for r in host.rtts]
    return PingResult(
        ip=host.address,
        is_alive=host.is_alive,
        min_rtt=round(host.min_rtt, 3),
        avg_rtt=round(host.avg_rtt, 3),
        max_rtt=round(host.max_rtt, 3),
        rtts=rtts,
        packets_sent=host.packets_sent,
        packets_received=host.packets_received,
        packet_loss=host.packet_loss,
        from_loc=location,
    )


def _failed(target: str, location: GeoLocation, why: str) -> PingResult:
    return PingResult(
        ip=target,
        is_alive=False,
        min_rtt=0.0,
        avg_rtt=0.0,
        max_rtt=0.0,
        rtts=[],
        packets_sent=0,
        packets_received=0,
        packet_loss=1.0,
        from_loc=location,
        error=why,
    )
