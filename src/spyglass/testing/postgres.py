"""A real PostgreSQL server on loopback for tests and benchmarks: Debian's postgresql (15),
initdb and pg_ctl into a folder of its own, a free port on 127.0.0.1 and its unix socket in that
folder, a password for its superuser (so a wrong one is refused), run as the ``postgres`` user
when we are root (the server refuses to run as root)."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from spyglass.testing import Unavailable
from spyglass.testing.clickhouse import ENDED_WITH_US

BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
INSTALL = "apt-get install -y postgresql (Debian's package)"
USER, PASSWORD = "spyglass", "state-secret"


def bin_dir() -> Path:
    """The folder of initdb and pg_ctl (Unavailable where PostgreSQL is not installed)."""
    for folder in BIN_DIRS:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise Unavailable(f"PostgreSQL is not installed: {INSTALL}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """One postgres on 127.0.0.1, its cluster and socket in a temporary folder of its own (one the
    ``postgres`` user owns: a test's tmp_path is root's alone), removed by :meth:`remove`."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="spyglass-postgres-"))
        self.data = self.folder / "cluster"
        self.port = 0
        self.process: subprocess.Popen | None = None
        self._user = _server_user()

    def url(self, database: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{database}"

    def _as_server(self, command: list[str], **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(command, user=self._user, check=True, capture_output=True, **kwargs)

    def start(self, timeout: float = 60.0) -> PostgresServer:
        binaries = bin_dir()
        if self._user is not None:
            shutil.chown(self.folder, self._user)
        if not self.data.exists():
            secret = self.folder / "pwfile"
            secret.write_text(PASSWORD)
            if self._user is not None:
                shutil.chown(secret, self._user)
            self._as_server(
                [str(binaries / "initdb"), "-D", str(self.data), "-U", USER, "--pwfile", str(secret)]
                + ["-A", "scram-sha-256"]
                + ["--no-sync", "-E", "UTF8", "--locale", "C"]
            )
        self.port = self.port or free_port()
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off -c max_connections=200"
        log = open(self.folder / "server.log", "ab")
        command = [*ENDED_WITH_US, str(binaries / "postgres"), "-D", str(self.data), *options.split()]
        self.process = subprocess.Popen(command, stdout=log, stderr=log, user=self._user)
        log.close()
        deadline = time.monotonic() + timeout
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"postgres did not start: {self._log_tail()}")
            time.sleep(0.1)
        return self

    def _answers(self) -> bool:
        import psycopg

        try:
            psycopg.connect(self.url(), connect_timeout=2).close()
        except psycopg.OperationalError:
            return False
        return True

    def create_database(self, name: str) -> str:
        """A fresh database ``name`` (dropped first if there); its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def _log_tail(self) -> str:
        path = self.folder / "server.log"
        return path.read_text(errors="replace")[-2000:].strip() if path.exists() else "(no log)"

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()  # SIGTERM: a smart shutdown that waits for clients: then fast
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.send_signal(2)  # SIGINT: fast shutdown
                try:
                    self.process.wait(30)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()

    def remove(self) -> None:
        """Stopped, and its files gone."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def _server_user() -> str | None:
    """Whom the server runs as: ``postgres`` when we are root, else ourselves (None)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise Unavailable(f"tests run as root and there is no postgres user: {INSTALL}") from None
    return "postgres"
