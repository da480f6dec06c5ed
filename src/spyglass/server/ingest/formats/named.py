"""Scanners' files this import does not read, named: what the file is and what to run instead, in
place of every line of it reported as a bad banner. Each is a format of its own, claiming only files
that no reading format claims, whose one record is an :class:`Unreadable` saying so."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

from spyglass.server.ingest.formats import HEAD, Unreadable

# An XML file's root element, past its declaration, comments, doctype and processing instructions.
_XML_ROOT = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*(?:(?:<\?.*?\?>|<!--.*?-->|<![^>]*>)\s*)*<([A-Za-z_][\w.:-]*)", re.S)


def _addresses(head: bytes) -> bool:
    """Lines of addresses alone (zmap's default output): the head's whole lines, at least one."""
    whole = head.split(b"\n")[:-1] if len(head) >= HEAD else head.split(b"\n")  # (the last may be cut)
    found = [line.strip() for line in whole if line.strip()]
    if not found:
        return False
    try:
        for line in found:
            ipaddress.ip_address(line.decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        return False
    return True


def _xml_cut_short(head: bytes) -> bool:
    """An XML file that ends before its first element (nmap -oX cut off within its first lines)."""
    start = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    return len(head) < HEAD and start.startswith((b"<?xml", b"<!")) and _XML_ROOT.match(head) is None


def _xml_other(head: bytes) -> bool:
    root = _XML_ROOT.match(head)
    return root is not None and root[1] != b"nmaprun"  # (nmap's and masscan's -oX are read)


@dataclass
class Named:
    name: str  # (its advice is shown after the file's name, in a line the CLI cuts at 200 characters)
    claims: Callable[[bytes], bool]
    advice: str

    def sniff(self, head: bytes) -> bool:
        return self.claims(head)

    def records(self, stream: IO[bytes]) -> Iterator[dict | Unreadable]:
        yield Unreadable("the whole file", self.advice)


NAMED = [
    Named(
        "masscan binary (-oB)",
        lambda head: head.startswith(b"masscan/1."),
        "masscan's binary output is not read here: turn it into JSON with "
        "`masscan --readscan FILE -oJ FILE.json` and import that",
    ),
    Named(
        "nmap text (-oN/-oG)",
        lambda head: head.startswith(b"# Nmap "),
        "nmap's normal and grepable output are not read here: run nmap with -oX FILE.xml (or -oA BASE, "
        "which writes the XML too) and import the XML",
    ),
    Named(
        "addresses alone",
        _addresses,
        "addresses with no port (zmap's default output) make no banner: run zmap with "
        "-f saddr,sport,timestamp-str (CSV, or -O json) and import that",
    ),
    Named(
        "XML cut short",
        _xml_cut_short,
        "the file ends before its first element (an nmap or masscan -oX file cut short?): nothing in it to read",
    ),
    Named(
        "XML",
        _xml_other,
        "XML that is not a scanner's read here: this import reads nmap's and masscan's -oX XML",
    ),
]
