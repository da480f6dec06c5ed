"""What every scanner format is and yields (:mod:`spyglass.server.formats` says the rules). Here, not
in the package, so that the package can list the format modules and they can import this without
a cycle."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Protocol

HEAD = 64 << 10  # bytes of a file given to ``sniff``


@dataclass(frozen=True)
class Unreadable:
    """A record of a scanner's file that could not be read: where (``line 12``, ``host 3``) and why."""

    where: str
    why: str


class ScanFormat(Protocol):
    name: str  # the tool: "nmap", "masscan", "zgrab2", "zmap"

    def sniff(self, head: bytes) -> bool:
        """Whether a file starting with ``head`` (at most HEAD bytes, un-gzipped) is this tool's."""
        ...

    def records(self, stream: IO[bytes]) -> Iterator[dict | Unreadable]:
        """The banners of ``stream`` (un-gzipped), one per open port or grabbed service."""
        ...
