"""zmap's CSV output (and ``-O json``'s, an object a line): one line per response, the fields ``-f``
named (the CSV's header line says which).

A response is an open port when zmap calls it a success (``success`` 1, a SYN-ACK for its TCP
scan); RSTs and repeats, where the file holds them, are no service. The time is the response's
(``timestamp-str``, or ``timestamp-ts`` and ``timestamp-us``); a file written without one takes the
time it is imported, once for the whole file. Without a header the columns are taken as zmap's
``saddr,sport`` first (``-f saddr,sport`` with the header cut off).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import IO

from spyglass.exactjson import loads
from spyglass.server.ingest.formats import Unreadable
from spyglass.server.ingest.formats.common import banner, lines, peek, scan_id, stamp, text

# zmap's output fields (``zmap --list-output-fields``, TCP, UDP and ICMP modules); a header names only these.
FIELDS = frozenset(
    "saddr saddr-raw daddr daddr-raw ipid ttl sport dport seqnum acknum window classification success repeat "
    "cooldown timestamp-str timestamp-ts timestamp-us icmp-responder icmp-type icmp-code icmp-unreach-str "
    "data udp_pkt_size type code icmp_id seq".split()
)
_HEADERLESS = re.compile(rb"\A\d{1,3}(?:\.\d{1,3}){3},\d{1,5}(?:,[^\r\n]*)?\r?\n")


def _json_row(line: bytes) -> dict | None:
    """A line of ``-O json`` as {field: value}; None for a line that is not one."""
    try:
        row = loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) and "saddr" in row and set(row) <= FIELDS else None


def _header(line: bytes) -> list[str] | None:
    names = line.decode("ascii", "replace").strip().split(",")
    return names if "saddr" in names and set(names) <= FIELDS else None


def _when(row: dict[str, str], fallback: str) -> str:
    if row.get("timestamp-str"):  # 2026-11-27T14:56:41.025+0000
        return stamp(datetime.strptime(row["timestamp-str"], "%Y-%m-%dT%H:%M:%S.%f%z"))
    if row.get("timestamp-ts"):
        return stamp(int(row["timestamp-ts"]) + int(row.get("timestamp-us") or 0) / 1e6)
    return fallback


class Zmap:
    name = "zmap"

    def sniff(self, head: bytes) -> bool:
        first = head.split(b"\n", 1)[0]
        return _header(first) is not None or _json_row(first) is not None or bool(_HEADERLESS.match(head))

    def records(self, stream: IO[bytes]) -> Iterator[dict | Unreadable]:
        head, stream = peek(stream)
        return self._rows(stream, scan_id(head))

    def _rows(self, stream: IO[bytes], scan: str) -> Iterator[dict | Unreadable]:
        tool, names = {"name": self.name}, list[str]()
        imported = stamp(datetime.now(UTC))
        for number, line in lines(stream):
            if line is None:
                yield Unreadable(f"line {number:,}", "longer than any record")
                continue
            if number == 1 and (header := _header(line)) is not None:
                names = header
                continue
            if not line.strip():
                continue
            try:
                record: dict | None = _json_row(line) if line.lstrip().startswith(b"{") else None
                if record is not None:  # -O json: values typed; read as the CSV's text
                    row = {k: str(v) for k, v in record.items() if v is not None}
                else:
                    values = next(csv.reader([text(line)]))
                    columns = names or ["saddr", "sport"] + [f"field{i}" for i in range(3, len(values) + 1)]
                    row = dict(zip(columns, values, strict=False))
                    if len(values) != len(columns):
                        raise ValueError(f"{len(values)} fields where the header names {len(columns)}")
                if row.get("success", "1") != "1" or row.get("repeat", "0") != "0":
                    continue
                if "sport" not in row:
                    raise ValueError("no port: zmap writes it with -f saddr,sport")
                transport = "udp" if row.get("classification", "").startswith("udp") else "tcp"
                when = _when(row, imported)
                yield banner(tool, scan, row["saddr"], int(row["sport"]), transport, when, None, record or row)
            except (ValueError, KeyError, OverflowError, OSError, csv.Error) as exc:
                yield Unreadable(f"line {number:,}", str(exc) or type(exc).__name__)


FORMAT = Zmap()
