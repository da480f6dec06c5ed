"""Run the embedded backend in the foreground (``spyglass serve``)."""

from __future__ import annotations

import socket
from collections.abc import Callable

from spyglass.local.sockets import base_urls, listen
from spyglass.server.demostore import DEMO_BANNERS, DEMO_SEED, unpack
from spyglass.server.process import (
    collect_cycles_seldom,
    prepare_process,
    stop_at_stdin_eof,
    switch_threads_sooner,
    uvicorn_server,
)


def announcement(app, host: str, port: int, *, geonet_only: bool = False) -> list[str]:
    """What ``serve`` prints: one ``name URL`` line per base URL that answers (an agent's only URL
    is its geonet one)."""
    urls = {"geonet": base_urls(host, port)["main"]} if geonet_only else base_urls(host, port, app.state.hosts)
    return [f"{name:7} {url}" for name, url in urls.items()]


class WorkersFailed(RuntimeError):
    """A worker of ``serve --workers`` kept dying; the message says which and how."""


def seed_demo_data(banners) -> None:
    """On a first run, fill an empty banner store with synthetic banners (marked as demo data):
    what a first start does where the shipped demo store (demostore.py) was not used."""
    from spyglass.datagen import generate
    from spyglass.server.ingest.importer import import_banners

    if banners.last_mark() or banners.get_meta("demo"):
        return
    banners.set_meta("demo", "1")
    import_banners(banners, generate(DEMO_BANNERS, seed=DEMO_SEED))


def serve(
    settings,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    geonet_only: bool = False,
    sock: socket.socket | None = None,
    demo: bool = False,
    exit_on_stdin_eof: bool = False,
    announce: Callable[[str], None] = print,
    workers: int = 1,
) -> None:
    """Serve ``settings`` (a :class:`spyglass.server.settings.Settings`) until interrupted. ``sock`` is a
    listening socket handed over by the launcher. With several ``workers``, this process binds,
    announces and supervises; the workers serve (:mod:`spyglass.server.workers`)."""
    from spyglass.local.datalock import hold
    from spyglass.server.app import create_app
    from spyglass.server.routers.geonet import create_geonet_app
    from spyglass.server.state.sqlite.database import full_disk_said

    prepare_process()
    if demo and not geonet_only and not settings.store:
        with full_disk_said(settings.data_dir):
            unpack(settings.data_dir)  # a first start opens the demo data ready-made, before it is opened
    with full_disk_said(settings.data_dir):  # anything written at start: a full disk is said so
        app = create_geonet_app(settings.geonet) if geonet_only else create_app(settings)
    sock = sock or listen(host, port, shared=workers > 1)
    bound, bound_port = sock.getsockname()[:2]
    if not geonet_only:  # one backend per data dir: a second dashboard attaches to this one
        local = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(bound, bound)
        held = hold(settings.data_dir, base_urls(local, bound_port)["main"], settings.namespace)  # noqa: F841 (kept while serving)
    for line in announcement(app, bound, bound_port, geonet_only=geonet_only):
        announce(line)
    if demo and not geonet_only:
        # Before serving (a first run without the shipped store only): no client ever sees a
        # half-filled demo index.
        with full_disk_said(settings.data_dir):
            seed_demo_data(app.state.banners)
    if workers > 1:
        from spyglass.server.workers import supervise

        # A socket each, on one port: each keeps the connections it accepted, so with one shared
        # socket the worker that woke first would take most of them. (A socket handed over is shared.)
        sockets = (
            [sock]
            if sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 0
            else [sock] + [listen(bound, bound_port, shared=True) for _ in range(workers - 1)]
        )
        if failure := supervise(settings, sockets, workers, exit_on_stdin_eof):
            raise WorkersFailed(failure)
        return
    server = uvicorn_server(app, settings)
    collect_cycles_seldom()
    switch_threads_sooner()
    if exit_on_stdin_eof:
        stop_at_stdin_eof(lambda: setattr(server, "should_exit", True))
    server.run(sockets=[sock])
