"""Reading what scanners write (nmap, masscan, zgrab2, zmap) as banners.

Each format is a module of this package that provides a :class:`ScanFormat`; :mod:`.known` lists
them in :data:`~.known.FORMATS`, by name (no format adds itself by being imported). ``spyglass
import`` gives a file to the first format whose ``sniff`` accepts its first bytes (gzip already
undone), and stores what its ``records`` yields like any banner; a file no format claims is read as
JSON lines of banners, as before.

Every banner a format yields:

- has ``ip_str``, ``port``, ``transport`` and ``timestamp`` (ISO 8601, UTC), and the members a
  banner of that service collected by the service has (``product``, ``version``, ``cpe23``,
  ``http``, ``ssl.cert``, ``ssh``, ``data``, ``hostnames``, ``domains``, ``os``) where the tool
  says them, shaped as the service shapes them, so the same queries, facets and pivots work;
- carries the tool's name in ``tags`` (``tag:nmap`` finds every nmap banner);
- has ``location``, ``asn``, ``org`` and ``isp`` where the user named MaxMind-format databases
  (``--geoip``, :mod:`.geoip`) that know its address, and none of them otherwise;
- carries its run in ``_shodan``: ``{"module": service name, "crawler": tool name, "id": ...,
  "options": {"scan": scan id}}``, so ``scan:ID`` finds one run. The scan id is derived from the
  run (its start time and command line where the tool says them, else the file's content): the
  same file imported twice adds nothing, two runs of one command are two scans of a host's history;
- keeps whatever the tool said that the banner model has no member for under ``tool``:
  ``{"name": "nmap", "version": "7.93", "args": "...", "record": <the tool's own record of this
  port, as JSON>}``. Nothing the tool wrote is dropped.

A record that cannot be read is yielded as :class:`Unreadable` naming its place in the file, and the
rest goes on. What a tool saw of a host besides its open ports (nmap: the host up, its closed and
filtered ports with their reasons) is a :class:`Seen` of a piece's ``parse``, never a banner: the
importer keeps it apart (:mod:`spyglass.server.banners.seen`). Formats stream: a file of any size
is never held whole in memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any, Protocol, runtime_checkable

HEAD = 64 << 10  # bytes of a file given to ``sniff``


@dataclass(frozen=True)
class Unreadable:
    """A record of a scanner's file that could not be read: where (``line 12``, ``host 3``) and why."""

    where: str
    why: str


@dataclass(frozen=True)
class Seen:
    """What a run saw of one host besides its open ports (banners/seen.py says its members)."""

    record: dict


class ScanFormat(Protocol):
    name: str  # the tool: "nmap", "masscan", "zgrab2", "zmap"

    def sniff(self, head: bytes) -> bool:
        """Whether a file starting with ``head`` (at most HEAD bytes, un-gzipped) is this tool's."""
        ...

    def records(self, stream: IO[bytes]) -> Iterator[dict | Unreadable]:
        """The banners of ``stream`` (un-gzipped), one per open port or grabbed service."""
        ...


@runtime_checkable
class Pieces(ScanFormat, Protocol):
    """A format whose file cuts cheaply into pieces that parse alone (nmap's hosts). Optional: the
    importer then cuts the file in its own process and parses the pieces in its worker processes
    (it reads ``records`` otherwise, in its own process)."""

    def pieces(self, stream: IO[bytes]) -> Iterator[tuple[Any, bytes] | Unreadable]:
        """The file cut into pieces, in order: (what the piece's parse needs to know besides it, which
        must pickle; its bytes); what cannot be cut out as Unreadable."""
        ...

    def parse(self, context: Any, data: bytes) -> Iterator[dict | Unreadable | Seen]:
        """The banners of one piece (``records`` yields these of every piece, in order), and what
        the run saw of its host besides them (a :class:`Seen`, which ``records`` leaves out)."""
        ...
