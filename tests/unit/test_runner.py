import socket

import httpx

from spyglass.local.sockets import base_urls, listen
from spyglass.server.geonet import GeonetSettings
from spyglass.server.routers.geonet import create_geonet_app
from spyglass.server.runner import announcement
from tests.conftest import start_backend


def test_listening_socket_disables_nagle():
    """Accepted sockets inherit TCP_NODELAY; without it each small answer waits for a delayed ACK."""
    sock = listen("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        sock.close()


def test_base_urls_bracket_ipv6():
    assert base_urls("::1", 8765, ["geonet"]) == {"main": "http://[::1]:8765", "geonet": "http://[::1]:8765/geonet"}


def test_serve_announces_only_base_urls_that_answer(tmp_path):
    server, backend = start_backend(tmp_path)
    with server:
        lines = announcement(backend.app, server.host, server.port)
        urls = dict(line.split() for line in lines)
        answers = {name: httpx.get(f"{url}/openapi.json").status_code for name, url in urls.items()}
        unknown = httpx.get(f"{backend.url}/nohost/openapi.json").status_code
    backend.store.close()
    assert list(urls) == ["main", "stream", "trends", "geonet"]
    assert set(answers.values()) == {200} and unknown == 404


def test_an_agent_announces_its_geonet_url_only():
    app = create_geonet_app(GeonetSettings())
    assert announcement(app, "127.0.0.1", 8765, geonet_only=True) == ["geonet  http://127.0.0.1:8765"]
