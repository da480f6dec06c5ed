"""The listening socket of a backend and the base URLs it answers at: bound by the launcher (which
hands it to its child) and by ``spyglass serve``."""

from __future__ import annotations

import socket
from collections.abc import Iterable


def base_urls(host: str, port: int, hosts: Iterable[str] = ()) -> dict[str, str]:
    """The main base URL and those of the mounted ``hosts`` (``/geonet``...) on ``host:port``."""
    shown = f"[{host}]" if ":" in host else host
    main = f"http://{shown}:{port}"
    return {"main": main, **{name: f"{main}/{name}" for name in hosts}}


def listen(host: str, port: int, *, shared: bool = False) -> socket.socket:
    """A listening TCP socket. Its protocol is stated and TCP_NODELAY set: asyncio only disables
    Nagle on sockets whose proto says TCP, and with Nagle on, every small response waits ~40 ms
    for the client's delayed ACK. ``shared``: other sockets may listen on the same port
    (SO_REUSEPORT), the kernel spreading new connections over them."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if shared:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock
