"""The one way the TUI and the CLI start the embedded backend: a child process on a free
loopback port, with this machine's local account.

The listening socket is bound here and handed to the child, so the URL is known at once and
requests made before the child is ready simply wait in the accept queue. Importing this module
does not load the web stack.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from spyglass import DEFAULT_NAMESPACE
from spyglass.config import EMBEDDED, URL_FIELDS, Profile, data_dir
from spyglass.local.datalock import Holder, served_by
from spyglass.local.sockets import base_urls, listen

# The live stream of the demo data: modest, and only ever on the demo data (see server/stream/demo.py).
DEMO_RATE = ("--demo-rate", "2")
# It serves one local user, who may point a webhook at this machine or ping it; what the environment
# allows besides still applies (SPYGLASS_NOTIFIER_ALLOW, SPYGLASS_GEONET_ALLOW).
NOTIFIERS_ON_LOOPBACK = ("127.0.0.0/8", "::1/128")
LOG_LIMIT = 2 * 1024 * 1024  # bytes: backend.log is rotated past this, and one older file is kept


class BackendFailed(RuntimeError):
    """The embedded backend could not be started; the message says why."""


def exit_reason(returncode: int) -> str:
    """How a process ended, as a person reads it: "signal 9" or "code 1"."""
    return f"signal {-returncode}" if returncode < 0 else f"code {returncode}"


def read_tail(path: Path, lines: int, chunk: int = 256 * 1024) -> list[str]:
    """The last ``lines`` lines of ``path`` (reading at most ``chunk`` bytes from its end)."""
    try:
        with open(path, "rb") as fh:
            start = max(0, fh.seek(0, os.SEEK_END) - chunk - 1)
            fh.seek(start)
            data = fh.read()
    except OSError:
        return []
    if start > 0:  # one byte more than the chunk was read: it says whether the first line is whole
        newline = data.find(b"\n")
        data = data[newline + 1 :] if newline >= 0 else b""
    return data.decode("utf-8", errors="replace").splitlines()[-lines:] if lines > 0 else []


class EmbeddedBackend:
    def __init__(
        self,
        data: Path | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        key: str | None = None,
        hosts: dict[str, str] | None = None,
    ) -> None:
        self.data_dir = Path(data) if data else data_dir()
        self.namespace = namespace
        self.key = key  # None: this machine's local account; else the key the user gave (SPYGLASS_API_KEY)
        self.hosts = hosts or {}  # stream_url, trends_url, geonet_url served elsewhere (SPYGLASS_GEONET_URL...)
        self.process: subprocess.Popen | None = None
        self.attached = False  # another dashboard's (or a serve's) backend holds the data: used as it is
        self.profile: Profile | None = None  # how to reach it: read again after wait_ready (it may attach)
        self._local_key = ""  # this machine's local account's key (start() reads it)
        self._lock = threading.RLock()  # start, stop and restart run in threads, one at a time

    @classmethod
    def for_profile(cls, profile: Profile, data: Path | None = None) -> EmbeddedBackend:
        """The backend that stands in for ``profile``'s main URL. What the profile does name still
        applies: its key (e.g. from SPYGLASS_API_KEY) and any stream, trends or geonet URL."""
        hosts = {name: url for name in URL_FIELDS if name != "url" and (url := getattr(profile, name))}
        return cls(data, profile.namespace, key=profile.key, hosts=hosts)

    @property
    def log_path(self) -> Path:
        return self.data_dir / "backend.log"

    @property
    def old_log_path(self) -> Path:
        return self.data_dir / "backend.log.1"

    def log_tail(self, lines: int = 500) -> list[str]:
        """The last ``lines`` lines the backend wrote, reaching into the rotated file if needed."""
        recent = read_tail(self.log_path, lines)
        return read_tail(self.old_log_path, lines - len(recent)) + recent

    def log_is_full(self, limit: int = LOG_LIMIT) -> bool:
        try:
            return self.log_path.stat().st_size > limit
        except OSError:
            return False

    def rotate_log(self, limit: int = LOG_LIMIT) -> None:
        """Keep the log bounded: past ``limit`` bytes it becomes backend.log.1 and starts again.

        A running backend holds the log open in append mode, so its content is copied and the file
        truncated (the backend's next write lands at the new end); a line written in between is lost.
        """
        with self._lock:
            if not self.log_is_full(limit):
                return
            try:
                if self.process is None or self.process.poll() is not None:
                    os.replace(self.log_path, self.old_log_path)
                else:
                    shutil.copyfile(self.log_path, self.old_log_path)
                    os.truncate(self.log_path, 0)
            except OSError:
                pass  # a log that cannot be rotated must not stop the backend

    def start(self) -> Profile:
        """Spawn the backend and return the profile to reach it (it may still be starting)."""
        with self._lock:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            # the backend inherits $SPYGLASS_STATE: its local account is made where it will look
            # the one import into the server (pyproject.toml's contracts): the local account
            from spyglass.server.stores import ENV_STATE, StoreUnavailable, open_account_state

            try:
                store = open_account_state(os.environ.get(ENV_STATE), self.data_dir)
            except StoreUnavailable as exc:  # not reached, or the postgres extra not installed
                raise BackendFailed(str(exc)) from None
            try:
                key = store.local_key()  # created on first run even when another key is used
            finally:
                store.close()
            self._local_key = key
            running = served_by(self.data_dir)
            if running is not None:  # one backend per data dir: use the one that serves it, as it speaks
                return self._attach(running)
            self.attached = False
            self.rotate_log()
            sock = listen("127.0.0.1", 0)
            port = sock.getsockname()[1]
            serve = ["serve", "--fd", str(sock.fileno()), "--data", str(self.data_dir), "--namespace", self.namespace]
            allowed = [*NOTIFIERS_ON_LOOPBACK, *os.environ.get("SPYGLASS_NOTIFIER_ALLOW", "").replace(",", " ").split()]
            serve += [arg for network in allowed for arg in ("--notifier-allow", network)]
            measured = [*NOTIFIERS_ON_LOOPBACK, *os.environ.get("SPYGLASS_GEONET_ALLOW", "").replace(",", " ").split()]
            serve += [arg for network in measured for arg in ("--geonet-allow", network)]
            log = open(self.log_path, "ab")  # noqa: SIM115 (the child's output, closed below)
            os.chmod(self.log_path, 0o600)
            try:
                self.process = subprocess.Popen(
                    # -P: the current directory is not searched for modules (a folder named
                    # spyglass there, such as the clone the user just installed from, would be
                    # imported instead of the installed package)
                    [sys.executable, "-P", "-m", "spyglass", *serve, "--exit-on-stdin-eof", "--demo", *DEMO_RATE],
                    stdin=subprocess.PIPE,
                    stdout=log,
                    stderr=log,
                    pass_fds=[sock.fileno()],
                    start_new_session=True,  # a Ctrl-C in the terminal is the dashboard's, not the backend's
                )
            finally:
                sock.close()
                log.close()
            return self._reach(base_urls("127.0.0.1", port)["main"], key)

    def _attach(self, running: Holder) -> Profile:
        self.attached = True
        if running.namespace is not None:
            self.namespace = running.namespace
        return self._reach(running.url, self._local_key)

    def _reach(self, url: str, local_key: str) -> Profile:
        """The profile of the backend at ``url``: the user's key, else the local account's."""
        reached = Profile(name=EMBEDDED, url=url, key=self.key or local_key, namespace=self.namespace, rate=None)
        self.profile = reached.replace(**self.hosts)
        return self.profile

    def restart(self) -> Profile:
        """Reap what is left of the backend and start it again on the same data (on a new port)."""
        with self._lock:
            self.stop()
            return self.start()

    async def wait_ready(self, timeout: float = 30.0) -> None:
        """Return once the backend answers (whether or not it takes the key: the caller says so);
        raise :class:`BackendFailed` if it dies or hangs."""
        import httpx

        assert self.profile is not None and (self.process is not None or self.attached)
        deadline = asyncio.get_running_loop().time() + timeout
        async with httpx.AsyncClient(timeout=2.0) as http:
            while True:
                if self.process is not None and self.process.poll() is not None:
                    running = await asyncio.to_thread(served_by, self.data_dir)
                    if running is not None:  # another dashboard's backend took the data dir first: ours
                        self.process = None  # said "served already" and left; that one is used instead
                        self._attach(running)
                        continue
                    raise BackendFailed(
                        f"the embedded backend exited ({exit_reason(self.process.returncode)}): {self.last_log_line()}"
                    )
                try:
                    response = await http.get(f"{self.profile.url}/api-info", params={"key": self.profile.key})
                    if response.status_code < 500:
                        return
                except httpx.TransportError:
                    if self.attached and await asyncio.to_thread(self._holder_changed):
                        deadline = asyncio.get_running_loop().time() + timeout  # a backend of its own starts
                        continue
                if asyncio.get_running_loop().time() > deadline:
                    raise BackendFailed(
                        f"the embedded backend did not answer within {timeout:g} s; see {self.log_path}"
                    )
                await asyncio.sleep(0.1)

    def _holder_changed(self) -> bool:
        """Whether the backend this one attached to no longer holds the data (a dashboard quitting
        as this one started: it waited 30 s on a URL nobody would answer, newcomer trial 7): then
        the data's new holder is used, or a backend of its own started."""
        with self._lock:
            running = served_by(self.data_dir)
            if running is not None and self.profile is not None and running.url == self.profile.url:
                return False
            if running is not None:
                self._attach(running)
            else:
                self.start()
            return True

    def last_log_line(self) -> str:
        lines = [line for line in read_tail(self.log_path, 20) if line.strip()]
        return lines[-1] if lines else "no output"

    def stop(self, timeout: float = 5.0) -> None:
        with self._lock:  # a stop from the UI waits for a restart under way, then stops what it started
            proc, self.process = self.process, None
            if proc is None:
                return
            if proc.stdin:
                proc.stdin.close()  # asks the backend to exit, and frees the pipe of one that died
            if proc.poll() is not None:  # poll() reaps one that already died
                return
            try:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
