"""The one way the TUI and the CLI start the embedded backend: a child process on a free
loopback port, with this machine's local account.

The listening socket is bound here and handed to the child, so the URL is known at once and
requests made before the child is ready simply wait in the accept queue. Importing this module
does not load the web stack.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from spyglass import DEFAULT_NAMESPACE
from spyglass.config import EMBEDDED, Profile, data_dir
from spyglass.server.runner import base_urls, listen
from spyglass.server.store import Store


class BackendFailed(RuntimeError):
    """The embedded backend could not be started; the message says why."""


class EmbeddedBackend:
    def __init__(self, data: Path | None = None, namespace: str = DEFAULT_NAMESPACE) -> None:
        self.data_dir = Path(data) if data else data_dir()
        self.namespace = namespace
        self.process: subprocess.Popen | None = None
        self.profile: Profile | None = None

    @property
    def log_path(self) -> Path:
        return self.data_dir / "backend.log"

    def start(self) -> Profile:
        """Spawn the backend and return the profile to reach it (it may still be starting)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        store = Store(self.data_dir)
        try:
            key = store.local_key()
        finally:
            store.close()
        sock = listen("127.0.0.1", 0)
        port = sock.getsockname()[1]
        log = open(self.log_path, "ab")
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "spyglass", "serve", "--fd", str(sock.fileno()),
                 "--data", str(self.data_dir), "--namespace", self.namespace, "--exit-on-stdin-eof", "--demo"],
                stdin=subprocess.PIPE, stdout=log, stderr=log, pass_fds=[sock.fileno()],
                start_new_session=True,  # a Ctrl-C in the terminal is the dashboard's, not the backend's
            )
        finally:
            sock.close()
            log.close()
        self.profile = Profile(name=EMBEDDED, url=base_urls("127.0.0.1", port)["main"], key=key,
                               namespace=self.namespace, rate=None)
        return self.profile

    async def wait_ready(self, timeout: float = 30.0) -> None:
        """Return once the backend answers; raise :class:`BackendFailed` if it dies or hangs."""
        import httpx

        assert self.profile is not None and self.process is not None
        deadline = asyncio.get_running_loop().time() + timeout
        async with httpx.AsyncClient(timeout=2.0) as http:
            while True:
                if self.process.poll() is not None:
                    raise BackendFailed(f"the embedded backend exited ({self.process.returncode}): "
                                        f"{self.last_log_line()}")
                try:
                    response = await http.get(f"{self.profile.url}/api-info", params={"key": self.profile.key})
                    if response.status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                if asyncio.get_running_loop().time() > deadline:
                    raise BackendFailed(f"the embedded backend did not answer within {timeout:g} s; "
                                        f"see {self.log_path}")
                await asyncio.sleep(0.1)

    def last_log_line(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "no log"
        return lines[-1] if lines else "no output"

    def stop(self, timeout: float = 5.0) -> None:
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
