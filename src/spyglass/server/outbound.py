"""What the backend's own outbound HTTP requests share (alert deliveries, geonet's peers).

Each of those makes a short-lived ``httpx.AsyncClient``, and a client left to make its own TLS
context loads the CA bundle on the event loop for every delivery, ahead of every other request.
One context, made once, serves them all (a context holds no connection)."""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def tls(trust_env: bool = True) -> ssl.SSLContext:
    """The one TLS context of outbound requests, made on first use: httpx's defaults (certifi's CA
    bundle), and with ``trust_env`` SSL_CERT_FILE/SSL_CERT_DIR where set, as a client's own would."""
    return httpx.create_ssl_context(trust_env=trust_env)
