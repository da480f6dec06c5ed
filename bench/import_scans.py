"""Importing scanners' output: banners a second, and peak memory as the file grows.

    python bench/import_scans.py [--size MB] [--work DIR] [--format nmap]

For each format (one entry of FORMATS below): writes a realistic file of about SIZE/10 MB and one
of SIZE MB (default 1,000: a real run's hosts again and again at other addresses; kept in WORK
for later runs), then, each in a process of its own:
- ``spyglass import`` (the command, as a user runs it) of the smaller file into a fresh embedded
  store: banners a second, and the same for the format's reader alone (records, no store), against
  its peers on the same file (for nmap: the standard library's ``xml.etree.ElementTree.parse``,
  the floor of any reading of the XML, and python-libnmap, installed from PyPI here when missing;
  for masscan's JSON: the standard library's ``json.loads`` of each record's line);
- peak RSS of the reader alone and of the whole import (its largest process), on the smaller file
  and on the larger (goal: at most 1.2x from one to the other: a file is streamed, never held).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOSTS_A_SECOND = 100  # masscan's hosts with open ports a second in the larger files


def write_nmap(path: Path, size: int) -> None:
    """A real nmap run's host (tests/formats/data, nmap 7.93 -sV -sC) at other addresses, to ``size`` bytes."""
    from spyglass.testing.scanfiles import parts, replicate

    real = (ROOT / "tests/formats/data/nmap-loopback.xml").read_bytes()
    hosts = max(1, size // len(parts(real)[1]))
    with open(path, "wb") as out:
        for piece in replicate(real, hosts):
            out.write(piece)


def etree_parse(path: Path) -> int:
    """The standard library's XML parser alone, the whole file as a tree: open ports."""
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    return sum(1 for state in root.iter("state") if state.get("state") == "open")


def libnmap(path: Path) -> int:
    """python-libnmap (its NmapParser, a report of objects): open ports."""
    try:
        from libnmap.parser import NmapParser
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "python-libnmap"], check=True)
        from libnmap.parser import NmapParser
    report = NmapParser.parse_fromfile(str(path))
    return sum(1 for host in report.hosts for service in host.services if service.state == "open")


def write_masscan(path: Path, size: int) -> None:
    """A real masscan -oJ --banners run (tests/formats/data, masscan 1.3.2: three ports open, an SSH
    and an FTP greeting, an HTTP head, server and title) at other addresses, to ``size`` bytes;
    the copies' times go on as a run's do (HOSTS_A_SECOND), as the reader holds a port's records
    for a while of the file's time (formats/masscan.py: WINDOW)."""
    lines = [
        line
        for line in (ROOT / "tests/formats/data/masscan-banners.json").read_text().splitlines()
        if line.startswith("{")
    ]
    real = lines[0].split('"')[3]  # the address every record of the run is about
    with open(path, "w") as out:
        out.write("[\n")
        for n in range(max(1, size // sum(len(line) + 3 for line in lines))):
            address = f'"198.{18 + (n >> 16) % 2}.{(n >> 8) % 256}.{n % 256}"'
            later = lambda m: f'"timestamp": "{int(m[1]) + n // HOSTS_A_SECOND}"'  # noqa: B023, E731
            copy = (re.sub(r'"timestamp": "(\d+)"', later, line.replace(f'"{real}"', address)) for line in lines)
            out.write(("\n,\n" if n else "") + "\n,\n".join(copy))
        out.write("\n]\n")


def write_masscan_open(path: Path, size: int) -> None:
    """masscan -oJ of a port scan (no --banners): a record for each open port, HOSTS_A_SECOND
    hosts a second, one port open on each of them, the commas on lines of their own as 1.3 writes."""
    ports = (22, 80, 443, 3389, 8080)
    with open(path, "w") as out:
        out.write("[\n")
        n = 0
        while out.tell() < size:
            ip = f"198.{18 + (n >> 16) % 2}.{(n >> 8) % 256}.{n % 256}"
            port = ports[n % len(ports)]
            out.write(("\n,\n" if n else "") + json.dumps(
                {"ip": ip, "timestamp": str(1_700_000_000 + n // HOSTS_A_SECOND),
                 "ports": [{"port": port, "proto": "tcp", "status": "open", "reason": "syn-ack", "ttl": 64}]}
            ))  # fmt: skip
            n += 1
        out.write("\n]\n")


def json_loads(path: Path) -> int:
    """The standard library's JSON parser alone, a line at a time: masscan's records (the floor; the
    real run's 8 records a host are 3 banners, a port's records joined)."""
    with open(path, "rb") as lines:
        return sum(1 for line in lines if line.startswith(b"{") and json.loads(line))


@dataclass
class Entry:
    """A format in the bench: how to write a file of it, and what else reads such a file."""

    write: Callable[[Path, int], None]
    suffix: str
    peers: dict[str, Callable[[Path], int]] = field(default_factory=dict)
    reads_as: str = ""  # the format spyglass reads it as, if not the entry's name
    records: Callable[[Path], int] | None = None  # the tool's records in a file (its goal is records a second)


FORMATS: dict[str, Entry] = {
    "nmap": Entry(write_nmap, ".xml", {"xml.etree parse (floor)": etree_parse, "python-libnmap": libnmap}),
    "masscan": Entry(write_masscan, ".json", {"json.loads a line (floor)": json_loads}, records=json_loads),
    "masscan-open": Entry(
        write_masscan_open, ".json", {"json.loads a line (floor)": json_loads}, reads_as="masscan", records=json_loads
    ),
}


# -- what each measurement runs, in a process of its own (``--child``) ---------------------------


def spyglass_import(path: Path) -> int:
    """``spyglass import --data DIR FILE`` as a user runs it, into a fresh data dir: banners loaded."""
    with tempfile.TemporaryDirectory(dir=path.parent) as data:
        command = [sys.executable, "-m", "spyglass", "import", "--data", data, str(path)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
    said = re.search(r"import: [\d,]+ read, ([\d,]+) new", done.stdout + done.stderr)
    assert said, done.stdout + done.stderr
    return int(said[1].replace(",", ""))


def child(kind: str, name: str, path: Path) -> dict:
    started = time.perf_counter()
    if kind == "import":
        count = spyglass_import(path)
    elif kind == "reader":
        from spyglass.server.ingest.sources import open_banner_file, sniff_file

        fmt = sniff_file(path)
        assert fmt is not None and fmt.name == (FORMATS[name].reads_as or name), f"{path} is not read as {name}"
        stream, raw = open_banner_file(path)
        with raw, stream:
            count = sum(1 for r in fmt.records(stream) if isinstance(r, dict))  # type: ignore[arg-type]
    else:
        count = FORMATS[name].peers[kind](path)
    took = time.perf_counter() - started
    # the import's peak: its largest process (the one that stores; its workers parse, and are smaller)
    who = resource.RUSAGE_CHILDREN if kind == "import" else resource.RUSAGE_SELF
    return {"seconds": took, "records": count, "rss_mb": resource.getrusage(who).ru_maxrss / 1024}


def measure(kind: str, name: str, path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, "--format", name, str(path)], capture_output=True, text=True
    )
    if done.returncode:
        sys.exit(f"{kind} of {path} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def bench(name: str, size_mb: int, work: Path) -> None:
    entry = FORMATS[name]
    files = {}
    for mb in (max(1, size_mb // 10), size_mb):
        path = work / f"{name}-{mb}mb{entry.suffix}"
        if not path.exists():
            started = time.perf_counter()
            entry.write(path, mb << 20)
            print(f"wrote {path} ({path.stat().st_size / 1e6:,.0f} MB) in {time.perf_counter() - started:.0f} s")
        files[mb] = path
    small, large = files.values()
    in_file = entry.records(small) if entry.records else None
    records = f", {in_file:,} records of the tool's" if in_file else ""
    print(f"\n{name}: {small.name} ({small.stat().st_size / 1e6:,.0f} MB{records}; counts: banners, a peer's its own)")
    print(f"  {'':26} {'count':>9} {'seconds':>8} {'count/s':>10} {'peak RSS':>9}" + ("  records/s" if in_file else ""))
    rows = {kind: measure(kind, name, small) for kind in ("import", "reader", *entry.peers)}
    for kind, r in rows.items():
        label = {"import": "spyglass import", "reader": f"spyglass {name} reader alone"}.get(kind, kind)
        rate = r["records"] / r["seconds"]
        line = f"  {label:26} {r['records']:>9,} {r['seconds']:>8.1f} {rate:>10,.0f} {r['rss_mb']:>6,.0f} MB"
        print(line + (f"  {in_file / r['seconds']:>9,.0f}" if in_file else ""))
    print(f"\n  peak RSS, {small.stat().st_size / 1e6:,.0f} MB file -> {large.stat().st_size / 1e6:,.0f} MB file:")
    for kind in ("reader", "import"):
        big = measure(kind, name, large)
        ratio = big["rss_mb"] / rows[kind]["rss_mb"]
        print(
            f"  {kind:8} {rows[kind]['rss_mb']:>6,.0f} -> {big['rss_mb']:>6,.0f} MB = {ratio:.2f}x (goal <= 1.2x)"
            + f"; {big['records']:,} records in {big['seconds']:.0f} s = {big['records'] / big['seconds']:,.0f}/s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000, help="MB of the larger file (the smaller: a tenth)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "spyglass-bench-scans")
    parser.add_argument("--format", choices=sorted(FORMATS), action="append", help="default: every one")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("file", nargs="?", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.format[0], args.file)))
        return
    args.work.mkdir(parents=True, exist_ok=True)
    for name in args.format or FORMATS:
        bench(name, args.size, args.work)


if __name__ == "__main__":
    main()
