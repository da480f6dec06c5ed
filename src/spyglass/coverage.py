"""Which owners (alerts) have an address in their networks, without scanning every network: the
alert engine, the /alert streams and the dashboard's notice watcher all ask it.

An alert may hold 100,000 networks: testing each banner against each of them made matching a
linear scan per banner. Here every owner's networks become, per IP version, one sorted list of
non-overlapping integer ranges, each labelled with the owners covering it, and a lookup is one
bisection. An address is covered by an owner exactly when it is in one of the owner's networks.
"""

from __future__ import annotations

import struct
import sys
from array import array
from bisect import bisect_right
from collections.abc import Iterable
from typing import Generic, TypeVar

from spyglass.netblocks import Address, Netblock

T = TypeVar("T")


Spans = dict[int, list[tuple[int, int]]]  # by IP version: sorted, disjoint [start, stop) ranges


def spans_of(networks: Iterable[Netblock]) -> Spans:
    """One owner's networks as ranges, overlapping and touching ones made one: 120,000 consecutive
    addresses are one range, so an alert's size no longer weighs on every build of a coverage."""
    out: Spans = {4: [], 6: []}
    for n in sorted(networks):
        ranges, stop = out[n.version], n.start + n.num_addresses
        if ranges and n.start <= ranges[-1][1]:
            if stop > ranges[-1][1]:
                ranges[-1] = (ranges[-1][0], stop)
        else:
            ranges.append((n.start, stop))
    return out


_COUNTS = struct.Struct("<II")  # how many IPv4 ranges, then IPv6 ranges, a packing holds


def pack_spans(spans: Spans) -> bytes:
    """``spans`` as bytes, to be kept beside the networks they come from: IPv4 ranges as pairs of
    32-bit first and last addresses, IPv6 ones as pairs of 128-bit ones. Unpacked, they need no
    network parsed again."""
    v4 = array("I", [bound for start, stop in spans[4] for bound in (start, stop - 1)])
    if sys.byteorder == "big":
        v4.byteswap()
    v6 = b"".join(start.to_bytes(16, "little") + (stop - 1).to_bytes(16, "little") for start, stop in spans[6])
    return _COUNTS.pack(len(spans[4]), len(spans[6])) + v4.tobytes() + v6


def unpack_spans(packed: bytes) -> Spans:
    """What :func:`pack_spans` packed; ValueError for bytes it did not make."""
    try:
        n4, n6 = _COUNTS.unpack_from(packed)
    except struct.error:
        raise ValueError("not packed spans") from None
    v6_at = _COUNTS.size + 8 * n4
    if len(packed) != v6_at + 32 * n6:
        raise ValueError("not packed spans")
    v4 = array("I")
    v4.frombytes(packed[_COUNTS.size : v6_at])
    if sys.byteorder == "big":
        v4.byteswap()
    return {
        4: _pairs(v4.tolist()),
        6: _pairs([int.from_bytes(packed[at : at + 16], "little") for at in range(v6_at, len(packed), 16)]),
    }


def _pairs(bounds: list[int]) -> list[tuple[int, int]]:
    """Ranges from their first and last addresses, one after the other."""
    return [(start, last + 1) for start, last in zip(bounds[::2], bounds[1::2], strict=True)]


def covers(spans: Spans, address: Address) -> bool:
    """Whether ``address`` is inside one of ``spans``' ranges."""
    ranges = spans[address.version]
    i = bisect_right(ranges, (int(address), 1 << 128)) - 1
    return i >= 0 and ranges[i][0] <= int(address) < ranges[i][1]


class Coverage(Generic[T]):
    def __init__(self, owners: Iterable[tuple[T, Spans]]) -> None:
        self.owners: list[T] = []
        edges: dict[int, list[tuple[int, int, int]]] = {4: [], 6: []}  # (position, +1/-1, owner)
        for i, (owner, spans) in enumerate(owners):
            self.owners.append(owner)
            for version, ranges in spans.items():
                for start, stop in ranges:
                    edges[version] += [(start, 1, i), (stop, -1, i)]
        self._ranges = {version: _sweep(e) for version, e in edges.items()}

    def covering(self, address: Address) -> list[T]:
        """The owners with ``address`` in one of their networks, in the order they were given."""
        starts, labels = self._ranges[address.version]
        i = bisect_right(starts, int(address)) - 1
        return [self.owners[o] for o in labels[i]] if i >= 0 else []


def _sweep(edges: list[tuple[int, int, int]]) -> tuple[list[int], list[tuple[int, ...]]]:
    """Range starts and, for each range up to the next start, the owners covering it (often none)."""
    edges.sort()
    starts: list[int] = []
    labels: list[tuple[int, ...]] = []
    active: dict[int, int] = {}  # owner -> how many of its networks cover the position
    for k, (position, step, owner) in enumerate(edges):
        count = active.get(owner, 0) + step
        if count:
            active[owner] = count
        else:
            del active[owner]
        if k + 1 < len(edges) and edges[k + 1][0] == position:
            continue  # every edge at one position is applied before the range it opens is labelled
        label = tuple(sorted(active))
        if not labels or labels[-1] != label:  # the same owners as the range before: one range
            starts.append(position)
            labels.append(label)
    return starts, labels
