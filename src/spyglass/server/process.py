"""What every process that serves does, alone (``spyglass serve``) or as one worker of several
(:mod:`spyglass.server.workers`): prepare itself, serve under uvicorn, stop when its launcher goes."""

from __future__ import annotations

import contextlib
import gc
import logging
import sys
import threading
from collections.abc import Callable


def prepare_process() -> None:
    """What a process that serves (or a worker of one) or imports does first: few glibc arenas
    (memory.py), and the files it makes private."""
    from spyglass.server.memory import limit_arenas
    from spyglass.server.state.datadir import private_files

    limit_arenas()
    private_files()


CYCLE_SCAN_EVERY = 50_000  # objects made (and not yet freed) between the cycle collector's young passes


def collect_cycles_seldom() -> None:
    """Before serving, the app made: the cycle collector is tuned for banners coming in.

    Measured under bench/ingest.py --collect-only (8 collectors, 10 stream readers): the
    collector's full passes took a quarter of the backend's CPU, 33 passes of about 0.1 s in 20 s.
    What starting made (modules, the app and its schemas) lives as long as the process, so it is
    frozen out of those passes; and a collected body's banners (acyclic JSON, some 20 objects
    each, alive about a second) were promoted to the oldest generation by young passes every 700
    objects, making full passes follow one another. With young passes every 50,000, most are freed
    first: GC 3.7 -> 1.1 s of the run, the backend 87 -> 67 us of CPU a banner. Cycles made while
    serving are still collected, a little later."""
    gc.freeze()
    gc.set_threshold(CYCLE_SCAN_EVERY, *gc.get_threshold()[1:])


SWITCH_EVERY = 0.001  # seconds a thread running Python keeps the GIL while another waits (CPython: 0.005)


def switch_threads_sooner() -> None:
    """Before serving: a thread that wants the GIL gets it within SWITCH_EVERY of asking.

    A search's threads give the GIL up within each call to tantivy and each row SQLite steps, and
    wait to take it back while the event loop runs Python (collecting, streaming): a search under
    collection waited less at the median in some runs and no more in others, the collecting no
    slower (bench/ingest.py --collect; docs/benchmarks.md)."""
    sys.setswitchinterval(SWITCH_EVERY)


def stop_at_stdin_eof(stop: Callable[[], None]) -> None:
    """Call ``stop`` when stdin ends: the launcher holds it open, and when the launcher goes away
    for any reason, so do we."""

    def watch() -> None:
        with contextlib.suppress(OSError, ValueError):
            while sys.stdin.buffer.read(1024):
                pass
        stop()

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def uvicorn_server(app, settings):
    """uvicorn serving ``app`` as the backend does, in one process or in each worker: the guarded
    HTTP/1.1 protocol (guard.py) on uvloop where installed, accept errors and per-connection warnings
    logged once a minute, and X-Forwarded-For believed only from the proxies the operator names
    (uvicorn believes any from loopback, so a local client could name any address to lock it out,
    or dodge the failed-key limit)."""
    import uvicorn

    from spyglass.server.errors import connection_log
    from spyglass.server.guard import HEAD_LIMIT, QuietAcceptErrors, guarded_protocol

    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=3,
        http=guarded_protocol(settings.limits),
        h11_max_incomplete_event_size=HEAD_LIMIT,
        loop="auto",  # libuv's loop (uvloop) where installed: each request takes less time than on asyncio's
        proxy_headers=bool(settings.forwarded_allow),
        forwarded_allow_ips=list(settings.forwarded_allow),
    )
    logging.getLogger("asyncio").addFilter(QuietAcceptErrors())
    logging.getLogger("uvicorn.error").addFilter(connection_log)  # per-connection warnings: once a minute

    class Server(uvicorn.Server):
        async def shutdown(self, sockets=None) -> None:
            # A stream never ends by itself: uvicorn would wait out its graceful timeout for the
            # streams other dashboards follow, then cancel them (a traceback in the log). Ended
            # first, the wait is for the requests that do end.
            inner = getattr(app, "app", app)  # the FastAPI app itself, or under a worker's wrapper
            hub = getattr(getattr(inner, "state", None), "hub", None)
            if hub is not None:
                await hub.stop()
            await super().shutdown(sockets)

    return Server(config)
