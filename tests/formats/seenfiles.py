"""Real nmap runs against loopback that see more than open services (banners/seen.py): a ping
sweep (``-sn``: the host up, nothing else), and port scans whose ports are closed (nothing listens:
``conn-refused``) and filtered. A port is filtered where nmap's SYN goes unanswered: a listener
whose accept queue is full (``listen(0)`` and connections it never accepts) has the kernel drop
new SYNs, so nmap says ``filtered`` and ``no-response``, on loopback, with no firewall."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

NMAP = shutil.which("nmap")
HOST = "127.0.0.1"


@contextmanager
def listener(full: bool) -> Iterator[int]:
    """A port on loopback that is open (a listener that accepts nothing but has room: nmap's
    connect completes) or, ``full``, filtered (its accept queue full: SYNs dropped)."""
    with ExitStack() as stack:
        server = stack.enter_context(socket.socket())
        server.bind((HOST, 0))
        server.listen(0 if full else 64)
        port = server.getsockname()[1]
        for _ in range(3 if full else 0):  # the queue's one place and then some, never accepted
            client = stack.enter_context(socket.socket())
            client.setblocking(False)
            client.connect_ex((HOST, port))
        time.sleep(0.2 if full else 0)
        yield port


def nmap(out: Path, *args: str) -> Path:
    """nmap's XML of a run with ``args`` against loopback, at ``out``."""
    assert NMAP, "nmap is not installed"
    base = [NMAP, "-n", "--reason", "--max-retries", "0", "--host-timeout", "60s", "-oX", str(out)]
    subprocess.run([*base, *args, HOST], check=True, capture_output=True, timeout=120)
    return out


def closed_ports(count: int, above: int = 1) -> list[int]:
    """``count`` ports on loopback from ``above`` on where nothing listens (nmap finds them closed)."""
    found: list[int] = []
    port = above
    while len(found) < count:
        with socket.socket() as probe:
            if probe.connect_ex((HOST, port)) != 0:
                found.append(port)
        port += 1
    return found


def runs(folder: Path) -> dict[str, Path]:
    """The real runs the tests read: ``sweep`` (``nmap -sn``), ``ports`` (an open port, a filtered
    one, three closed: each listed with its reason) and ``many`` (40 closed and 30 filtered ports:
    nmap counts them in ``<extraports>`` with their reasons and ranges)."""
    files = {"sweep": nmap(folder / "sweep.xml", "-sn")}
    closed = closed_ports(3)
    with ExitStack() as stack:
        opened = stack.enter_context(listener(full=False))
        filtered = [stack.enter_context(listener(full=True)) for _ in range(31)]
        listed = ",".join(map(str, [opened, filtered[0], *closed]))
        files["ports"] = nmap(folder / "ports.xml", "-sT", "-Pn", "-p", listed)
        many = ",".join(map(str, closed_ports(40, above=100) + filtered[1:]))
        files["many"] = nmap(folder / "many.xml", "-sT", "-Pn", "-p", many)
    return files
