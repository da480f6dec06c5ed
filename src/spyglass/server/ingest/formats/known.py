"""The formats ``spyglass import`` knows, listed in the order they are tried.

The list names every format module (none adds itself by being imported), so what is read does not
depend on which modules something else happened to import first. The named formats (files a
scanner wrote that are not read here, each with its advice) come before nmap's XML: ``XML`` claims
only what no scanner's reader does.
"""

from __future__ import annotations

from spyglass.server.ingest.formats import ScanFormat, masscan, named, nmap, zgrab2, zmap

FORMATS: list[ScanFormat] = [masscan.FORMAT, *named.NAMED, nmap.FORMAT, zgrab2.FORMAT, zmap.FORMAT]


def format_of(head: bytes) -> ScanFormat | None:
    """The format whose tool wrote a file beginning with ``head``; None for banner JSON lines."""
    return next((f for f in FORMATS if f.sniff(head)), None)
