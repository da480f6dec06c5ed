"""Scanners' files made bigger for tests and benches: a real nmap run's host copied to many
addresses."""

from __future__ import annotations

import re
from collections.abc import Iterator


def parts(xml: bytes) -> tuple[bytes, bytes, bytes]:
    """(what comes before the first host, the hosts, what follows the last)."""
    start, end = xml.index(b"<host "), xml.rindex(b"</host>") + len(b"</host>")
    return xml[:start], xml[start:end], xml[end:]


def replicate(xml: bytes, hosts: int, first: int = 0) -> Iterator[bytes]:
    """A file of ``hosts`` copies of the run's host, each at its own address in 198.18.0.0/15 (the
    benchmarking range), in pieces (a big one is written as it is made)."""
    head, body, tail = parts(xml)
    body = re.sub(rb'addr="127\.0\.0\.1"', b'addr="%s"', body.replace(b"%", b"%%"))
    yield head
    for n in range(first, first + hosts):
        yield body % f"198.{18 + (n >> 16) % 2}.{(n >> 8) & 255}.{n & 255}".encode() + b"\n"
    yield tail
