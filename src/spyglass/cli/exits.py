"""How a command ends: its exit code, and the one line on stderr that says why.

0 success, 1 unexpected failure (or, for ``import``, some bad lines), 2 bad input or usage, 3 key,
plan or credits, 4 not found, 5 connection, timeout, rate limit or server failure. A leaf module:
the command families import it, and the parser that imports them does too.
"""

from __future__ import annotations

import signal
import sys
import threading

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_ACCESS, EXIT_NOT_FOUND, EXIT_UNAVAILABLE = 0, 1, 2, 3, 4, 5


def exit_code_for(exc: BaseException) -> int:
    from spyglass.client import errors as e
    from spyglass.config import ConfigError
    from spyglass.server.state.sqlite.database import (  # sqlite3 only: no web stack
        CorruptDatabase,
        LostDatabase,
        SchemaTooNew,
    )

    for classes, code in (
        ((e.BadRequest, ConfigError, CorruptDatabase, LostDatabase, SchemaTooNew), EXIT_USAGE),
        ((e.AuthenticationError, e.Forbidden, e.NoCredits), EXIT_ACCESS),
        ((e.NotFound,), EXIT_NOT_FOUND),
        ((e.TransportError, e.RateLimited, e.ServerError, e.ResponseFormatError), EXIT_UNAVAILABLE),
    ):
        if isinstance(exc, classes):
            return code
    return EXIT_FAILURE


def fail(message: str, code: int) -> int:
    """One line on stderr (inert: it may quote a server or a file) and the exit code."""
    from spyglass.safetext import clean

    print(f"spyglass: {clean(message, one_line=True)}", file=sys.stderr)
    return code


class UsageError(ValueError):
    """Bad input a command found before doing anything: one line and exit 2."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``), stopping a command as ctrl+c does: what it kept said, exit 143."""


def stop_as_interrupted_on_sigterm() -> None:
    """For a long command that says what it leaves (``args.on_interrupt``): ``kill`` stops it as
    ctrl+c does, its workers ended in order, rather than mid-write with nothing said (newcomer
    trial 22: an import killed so printed only multiprocessing's leaked-semaphore warning)."""

    def terminated(signum: int, frame: object) -> None:
        raise Terminated

    if threading.current_thread() is threading.main_thread():  # (only it may; a test's thread may not)
        signal.signal(signal.SIGTERM, terminated)
