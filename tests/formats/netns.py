"""Two network namespaces this test creates, joined by a veth pair: real scanners (masscan, zmap)
send raw packets from one to services in the other. masscan refuses the loopback interface
("failed to detect MAC address of interface lo"), and raw scans of the machine's own network are
no test's business: here nothing leaves the pair."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

SCANNER_IP, TARGET_IP = "10.77.0.1", "10.77.0.2"
ADAPTER_IP = "10.77.0.3"  # masscan's own TCP stack (for --banners): an address the kernel does not own
_names = itertools.count()

# The target's services: each says its hostile greeting (markup, an escape sequence) or answers a request.
SERVICES = r"""
import socket, sys, threading

def answer(c, reply, wait):
    try:
        c.settimeout(5)
        if wait:
            c.recv(4096)
        c.sendall(reply)
    except OSError:
        pass
    c.close()

def serve(s, reply, wait):
    while True:
        c, _ = s.accept()
        threading.Thread(target=answer, args=(c, reply, wait), daemon=True).start()

listeners = []
for port, reply, wait in [
    (21, b"220 (vsFTPd 3.0.3) [bold red]owned[/]\x1b[2J\r\n", False),
    (22, b"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n", False),
    (80, b"HTTP/1.0 200 OK\r\nServer: nginx/1.22.1\r\nContent-Type: text/html\r\n\r\n"
         b"<title>[b]hi[/b] &amp; bye</title>", False),
]:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[1], port))
    s.listen()
    listeners.append(threading.Thread(target=serve, args=(s, reply, wait), daemon=True))
for t in listeners:
    t.start()
print("ready", flush=True)
threading.Event().wait()
"""
PORTS = (21, 22, 80)


@dataclass
class Link:
    scanner: str  # the namespaces' names
    target: str
    iface: str  # the scanner's end of the pair
    target_mac: str

    def run(self, *command: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``command`` in the scanner's namespace; it must succeed."""
        done = subprocess.run(
            ["ip", "netns", "exec", self.scanner, *command], capture_output=True, text=True, timeout=timeout
        )
        assert done.returncode == 0, f"{command[0]}: exit {done.returncode}\n{done.stderr[-2000:]}"
        return done


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@contextmanager
def link() -> Iterator[Link]:
    """A scanner namespace and a target namespace serving :data:`SERVICES` on :data:`PORTS`; the
    test is skipped, with the reason, where namespaces cannot be made here."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        pytest.skip("network namespaces need root and iproute2 (ip): the tools' documented formats are tested instead")
    n = f"{os.getpid() % 100000}x{next(_names)}"
    scanner, target = f"sgs{n}", f"sgt{n}"
    try:
        _ip("netns", "add", scanner)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot create a network namespace here ({exc.stderr.decode().strip()})")
    services = None
    try:
        _ip("netns", "add", target)
        _ip("link", "add", f"vs{n}", "netns", scanner, "type", "veth", "peer", "name", f"vt{n}", "netns", target)
        for ns, dev, address in ((scanner, f"vs{n}", SCANNER_IP), (target, f"vt{n}", TARGET_IP)):
            _ip("-n", ns, "addr", "add", f"{address}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
        shown = subprocess.run(["ip", "-n", target, "-j", "link", "show", f"vt{n}"], capture_output=True, check=True)
        mac = json.loads(shown.stdout)[0]["address"]
        services = subprocess.Popen(
            ["ip", "netns", "exec", target, sys.executable, "-c", SERVICES, TARGET_IP],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert services.stdout is not None and services.stdout.readline().strip() == "ready"
        yield Link(scanner, target, f"vs{n}", mac)
    finally:
        if services is not None:
            services.kill()
            services.wait(10)
        for ns in (scanner, target):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
