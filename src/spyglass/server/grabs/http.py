"""HTTP: the front page (following redirects on the same service), robots.txt, security.txt,
sitemap.xml and the favicon. The https module runs the same over TLS."""

from __future__ import annotations

import asyncio
import base64
import ssl
from urllib.parse import quote, urljoin, urlsplit

from . import httpparse
from .base import Closed, Conn, Found, NotTLS, Target, cpe_members, favicon_hash, signed_hash

MAX_REDIRECTS = 3
USER_AGENT = "spyglass-crawler"
# Extra documents: banner member name -> path.
_PATH_SAFE = "/?=&%:@!$'()*+,;~-._"  # what stays as it is in a request path; spaces, controls, non-ASCII are quoted
DOCUMENTS = {"robots": "/robots.txt", "securitytxt": "/.well-known/security.txt", "sitemap": "/sitemap.xml"}


def authority(t: Target, tls: bool) -> str:
    host = f"[{t.ip}]" if ":" in t.ip else t.ip
    return host if t.port == (443 if tls else 80) else f"{host}:{t.port}"


async def fetch(t: Target, path: str, tls: ssl.SSLContext | None) -> httpparse.Response | None:
    """One GET on a new connection; None when the service does not answer with HTTP.
    Raises Closed (or NotTLS) when the connection itself fails."""
    conn = await Conn.open(t, tls)
    try:
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {authority(t, tls is not None)}\r\nUser-Agent: {USER_AGENT}\r\n"
            "Accept: */*\r\nConnection: close\r\n\r\n"
        )
        if not await conn.send(request.encode("latin-1", "replace")):
            return None
        return httpparse.parse(await conn.read_until(httpparse.complete))
    finally:
        await conn.close()


def same_service(t: Target, url: str, tls: bool, page: str = "/") -> str | None:
    """The path of a URL (a redirect's or an icon's, relative to ``page``) on this same service (scheme,
    address and port), else None: a scanner only talks to the address it was asked to scan."""
    scheme = "https" if tls else "http"
    try:
        parts = urlsplit(urljoin(urljoin(f"{scheme}://{authority(t, tls)}/", page), url))
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # an unbalanced [ or a port out of range in what the service sent
        return None
    if parts.scheme != scheme or (parts.hostname or "") != t.ip.lower() or port != t.port:
        return None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return quote(path, safe=_PATH_SAFE)


async def grab(t: Target, tls: ssl.SSLContext | None = None) -> Found | None:
    path, redirects = "/", list[dict]()
    resp = await fetch(t, path, tls)
    while resp is not None and resp.status in (301, 302, 303, 307, 308) and len(redirects) < MAX_REDIRECTS:
        nxt = same_service(t, resp.header("location") or "", tls is not None, path)
        if nxt is None or not resp.header("location"):
            break
        redirects.append({"host": t.ip, "data": resp.head, "location": path, "html": resp.text()})
        path = nxt
        resp = await fetch(t, path, tls)
    if resp is None:
        return None
    page = resp.text()
    server = resp.header("server")
    http: dict = {
        "status": resp.status,
        "title": httpparse.title(page),
        "server": server,
        "host": t.ip,
        "html": page,
        "html_hash": signed_hash(page),
        "location": path,
        "redirects": redirects,
    }
    extras = await asyncio.gather(
        *(_document(t, p, tls) for p in DOCUMENTS.values()), _favicon(t, page, path, tls), return_exceptions=True
    )
    for name, doc in zip(DOCUMENTS, extras[:-1], strict=True):
        text = doc if isinstance(doc, str) else None
        http[name] = text
        http[f"{name}_hash"] = signed_hash(text) if text is not None else None
    if isinstance(extras[-1], dict):
        http["favicon"] = extras[-1]
    members = {"http": http}
    product = httpparse.server_product(server)
    if product:
        members.update(cpe_members(*product))
    return Found("https" if tls else "http", resp.head, members)


def _plain(resp: httpparse.Response | None) -> bool:
    """A real document, not an HTML error page that a service returns for every path."""
    if resp is None or resp.status != 200 or not resp.body:
        return False
    return "html" not in (resp.header("content-type") or "").lower() and resp.body.lstrip()[:2] != b"<!"


async def _document(t: Target, path: str, tls: ssl.SSLContext | None) -> str | None:
    try:
        resp = await fetch(t, path, tls)
    except (Closed, NotTLS):
        return None
    return resp.text() if resp is not None and _plain(resp) else None


async def _favicon(t: Target, page: str, page_path: str, tls: ssl.SSLContext | None) -> dict | None:
    href = httpparse.icon_href(page)
    path = same_service(t, href, tls is not None, page_path) if href else None
    path = path or "/favicon.ico"
    try:
        resp = await fetch(t, path, tls)
    except (Closed, NotTLS):
        return None
    if resp is None or resp.status != 200 or not resp.body or resp.body.lstrip()[:1] == b"<":
        return None
    return {"hash": favicon_hash(resp.body), "data": base64.encodebytes(resp.body).decode(), "location": path}
