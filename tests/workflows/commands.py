"""Running spyglass as a user does: a process with the environment the tests isolate."""

from __future__ import annotations

import os
import subprocess
import sys


def spyglass(
    *args: str, env: dict[str, str] | None = None, ok: bool = True, timeout: float | None = 300
) -> subprocess.CompletedProcess[str]:
    """``spyglass ARGS...`` as a process (its environment plus ``env``); with ``ok``, it must succeed.
    ``timeout``: a safety net for a command that hangs (None: the test's own limit)."""
    done = subprocess.run(
        [sys.executable, "-m", "spyglass", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    if ok:
        assert done.returncode == 0, f"spyglass {' '.join(args)}: exit {done.returncode}\n{done.stderr}"
    return done


class Terminal:
    """A command in a pseudo-terminal of its own (the dashboard as a user starts it): what it drew,
    as bytes, and keys to send."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, size: tuple[int, int] = (120, 36)) -> None:
        import fcntl
        import pty
        import struct
        import termios

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        os.set_blocking(self.master, False)
        self.drawn = b""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "spyglass", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**os.environ, "TERM": "xterm-256color", **(env or {})},
            start_new_session=True,
        )
        os.close(slave)

    def wait_for(self, text: bytes, timeout: float = 90.0) -> None:
        """Read what it draws until ``text`` was drawn; AssertionError at ``timeout`` seconds."""
        import select
        import time

        deadline = time.monotonic() + timeout
        while text not in self.drawn:
            left = deadline - time.monotonic()
            assert left > 0 and self.process.poll() is None, f"{text!r} never drawn: {self.drawn[-2000:]!r}"
            if select.select([self.master], [], [], min(left, 0.5))[0]:
                try:
                    self.drawn += os.read(self.master, 65536)
                except OSError:
                    pass

    def press(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def close(self, timeout: float = 30.0) -> int | None:
        """Wait for it to end (after a quit key), reading what it draws meanwhile (a terminal
        nobody reads blocks its writer), else end it; its exit code."""
        import select
        import time

        deadline = time.monotonic() + timeout
        try:
            while self.process.poll() is None and time.monotonic() < deadline:
                if select.select([self.master], [], [], 0.2)[0]:
                    try:
                        self.drawn += os.read(self.master, 65536)
                    except OSError:
                        pass
            if self.process.poll() is None:
                self.process.kill()
                return None
            return self.process.returncode
        finally:
            os.close(self.master)
