"""Real nmap XML for the tests and the import bench: nmap (Debian's) run with ``-sV -sC`` against
the suite's own loopback services, and bigger files made of that run's host with other addresses."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from spyglass.testing.scanfiles import parts as parts
from spyglass.testing.scanfiles import replicate as replicate
from tests.scanservers import (
    HOST,
    Service,
    _Handler,
    ftp_service,
    http_service,
    https_service,
    make_cert,
    smtp_service,
    ssh_service,
)

NMAP = shutil.which("nmap")
# A title as a hostile page may write it: markup for the terminal's renderer and for HTML, an
# entity, C1 controls (CSI, OSC, ST: escape sequences of one character) and a right-to-left override.
HOSTILE_TITLE = "[bold red]evil[/] &lt;b&gt;x&lt;/b&gt; \u009b31m\u009d0;pwned\u009c \u202e"
SCRIPTS = "default,http-headers,banner"  # -sC's scripts, and the two that say headers and banners


class _Hostile(_Handler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = f"<html><head><title>{HOSTILE_TITLE}</title></head><body>hi</body></html>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@dataclass
class Scan:
    xml: Path
    services: dict[str, Service] = field(default_factory=dict)  # by name: http, https, ssh, smtp, ftp, hostile


@contextlib.contextmanager
def services() -> Iterator[dict[str, Service]]:
    hostile: type[BaseHTTPRequestHandler] = _Hostile
    with (
        http_service() as http,
        https_service(make_cert("nmap.scan.test")) as https,
        ssh_service() as ssh,
        smtp_service(make_cert("mail.scan.test")) as smtp,
        ftp_service() as ftp,
        http_service(handler=hostile) as bad,
    ):
        yield {"http": http, "https": https, "ssh": ssh, "smtp": smtp, "ftp": ftp, "hostile": bad}


def run_nmap(out: Path, tries: int = 3) -> Scan:
    """``nmap -sV -sC`` of the services (about 55 s here, idle), its XML written to ``out``.

    On a machine busy with the rest of the suite, nmap's STARTTLS certificate script sometimes
    gives up on the SMTP service: its scripts wait ``host.times.timeout`` scaled, at least 1 s
    (stdnse.get_timeout), and a loaded machine answers a loopback handshake slower than that. A
    round-trip timeout of at least 4 s makes that wait 8 s; a run whose XML still lacks a
    certificate the services presented is made again, ``tries`` times at most, so that the tests
    read what nmap writes when it sees everything."""
    assert NMAP, "nmap is not installed"
    with services() as found:
        ports = ",".join(str(s.port) for s in found.values())
        command = [NMAP, "-sV", "-sC", "--script", SCRIPTS, "-T4", "--host-timeout", "180s"]
        command += ["--min-rtt-timeout", "4s", "--max-rtt-timeout", "5s"]
        names = [s.facts["cert"].subject_cn for s in found.values() if s.facts.get("cert")]
        for _ in range(tries):
            subprocess.run([*command, "-p", ports, "-oX", str(out), HOST], check=True, capture_output=True, timeout=190)
            if all(f"commonName={name}" in out.read_text() for name in names):
                break
    return Scan(out, found)
