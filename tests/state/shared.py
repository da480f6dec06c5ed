"""Backends that are one service: `spyglass serve` processes on loopback, each with a data dir of
its own, over one ClickHouse and one PostgreSQL that the tests start; one can be killed (-9)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from spyglass.config import Profile


def state_key(url: str, folder: Path, plan: str = "enterprise", *, collector: bool = False) -> str:
    """A key of a new account in the state at ``url`` (as `spyglass keys create --state` makes one)."""
    from spyglass.server.state.postgres import PostgresAccounts

    accounts = PostgresAccounts(url, folder)
    try:
        return accounts.create_key(plan, collector=collector)
    finally:
        accounts.close()


class ServeProcess:
    """``spyglass serve --data DATA [--store STORE] --state STATE OPTIONS`` on a free loopback port."""

    def __init__(self, data_dir: Path, store: str | None, state: str, *options: str) -> None:
        self.log = data_dir.with_suffix(".log")
        data_dir.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "spyglass", "serve", "--data", str(data_dir), "--port", "0"]
        with open(self.log, "wb") as stderr:
            self.process = subprocess.Popen(
                [*argv, *(["--store", store] if store else []), "--state", state, *options],
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        assert first.startswith("main"), f"{first!r}: {self.log.read_text()}"
        self.url = first.split()[1]

    def profile(self, key: str) -> Profile:
        return Profile(name="test", url=self.url, key=key, rate=None)

    def kill(self) -> None:
        """As a crash or a lost machine would: no stop, no clean-up."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        """As an operator would: SIGTERM, and the backend stops cleanly."""
        self.process.terminate()
        self.process.wait(30)

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *exc) -> None:
        if self.process.poll() is None:
            self.stop()
