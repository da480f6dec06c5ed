import socket

from spyglass.server.runner import base_urls, listen


def test_listening_socket_disables_nagle():
    """Accepted sockets inherit TCP_NODELAY; without it each small answer waits for a delayed ACK."""
    sock = listen("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        sock.close()


def test_base_urls_bracket_ipv6():
    assert base_urls("::1", 8765)["geonet"] == "http://[::1]:8765/geonet"
