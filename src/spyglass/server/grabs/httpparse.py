"""HTTP response parsing for the http module: pure functions on bytes, safe on anything."""

from __future__ import annotations

import codecs
import html
import re
from dataclasses import dataclass, field

MAX_TITLE = 512
_STATUS = re.compile(rb"^HTTP/(\d(?:\.\d)?) +(\d{3})(?: +([^\r\n]*))?")
_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.I | re.S)
_ICON = re.compile(r"<link\b[^>]*>", re.I | re.S)
_ATTR = re.compile(r"""(\w[\w-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.S)
_SERVER = re.compile(r"^([A-Za-z][\w.\-]*(?:[ _-][A-Za-z][\w.\-]*)*?)(?:[/( ]v?(\d[\w.\-]*))?(?=$|[\s/()])")


@dataclass
class Response:
    status: int
    head: str  # the status line and headers as sent, ending with a blank line: a banner's "data"
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)

    def text(self) -> str:
        """The body decoded by the charset the service declared, else as UTF-8."""
        charset = "utf-8"
        m = re.search(r"charset=[\"']?([\w.:-]+)", self.header("content-type") or "", re.I)
        if m:
            try:
                charset = codecs.lookup(m.group(1)).name
            except LookupError:
                pass
        try:
            return self.body.decode(charset, "replace")
        except (LookupError, UnicodeError, TypeError):
            return self.body.decode("utf-8", "replace")


def head_end(raw: bytes) -> int:
    """Index just past the blank line ending the head, or -1."""
    i = raw.find(b"\r\n\r\n")
    j = raw.find(b"\n\n")
    ends = [k + 4 for k in (i,) if k >= 0] + [k + 2 for k in (j,) if k >= 0]
    return min(ends) if ends else -1


def parse(raw: bytes) -> Response | None:
    """A response from the raw bytes the service sent; None when it is not HTTP."""
    m = _STATUS.match(raw)
    if not m:
        return None
    end = head_end(raw)
    head_bytes = raw if end < 0 else raw[:end]
    head = head_bytes.decode("latin-1")
    headers = []
    for line in head.split("\n")[1:]:  # only CR LF (or LF) ends a line: not the other line breaks str knows
        name, sep, value = line.rstrip("\r").partition(":")
        if sep and name.strip():
            headers.append((name.strip(), value.strip(" \t")))
    resp = Response(status=int(m.group(2)), head=head, headers=headers)
    if end >= 0:
        resp.body = _body(raw[end:], resp)
    return resp


def _body(rest: bytes, resp: Response) -> bytes:
    if "chunked" in (resp.header("transfer-encoding") or "").lower():
        return dechunk(rest)
    length = resp.header("content-length")
    if length and length.isdigit():
        return rest[: int(length)]
    return rest


def dechunk(data: bytes) -> bytes:
    """A chunked body's content, as far as it is well formed."""
    out, pos = [], 0
    while True:
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            break
        size_text = data[pos:eol].split(b";")[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            break
        if size <= 0:
            break
        out.append(data[eol + 2 : eol + 2 + size])
        pos = eol + 2 + size + 2
    return b"".join(out)


def complete(raw: bytes) -> bool:
    """Whether a whole response has arrived (so a keep-alive service need not be waited out)."""
    end = head_end(raw)
    if end < 0:
        return False
    resp = parse(raw[:end])
    if resp is None:
        return True  # not HTTP: nothing more to wait for
    if resp.status in (204, 304) or 100 <= resp.status < 200:
        return True
    if "chunked" in (resp.header("transfer-encoding") or "").lower():
        return raw.endswith(b"0\r\n\r\n")
    length = resp.header("content-length")
    return bool(length and length.isdigit() and len(raw) - end >= int(length))


def title(page: str) -> str | None:
    m = _TITLE.search(page)
    if not m:
        return None
    return title_text(m.group(1))


def title_text(raw: str) -> str:
    """A page's title as the crawler keeps it: entities read, white space collapsed, cut to MAX_TITLE."""
    return " ".join(html.unescape(raw).split())[:MAX_TITLE]


def icon_href(page: str) -> str | None:
    """The href of the page's ``<link rel="icon">`` (or "shortcut icon"), if it declares one."""
    for tag in _ICON.findall(page):
        attrs = {k.lower(): a or b or c for k, a, b, c in _ATTR.findall(tag)}
        if "icon" in attrs.get("rel", "").lower().split() and attrs.get("href"):
            return html.unescape(attrs["href"])
    return None


# Server header product names as the original service writes them, with their CPE vendor:product.
KNOWN_SERVERS = {
    "apache": ("Apache httpd", "apache:http_server"),
    "nginx": ("nginx", "f5:nginx"),
    "microsoft-iis": ("Microsoft IIS httpd", "microsoft:internet_information_services"),
    "lighttpd": ("lighttpd", "lighttpd:lighttpd"),
    "jetty": ("Jetty", "eclipse:jetty"),
    "openresty": ("OpenResty", "openresty:openresty"),
    "caddy": ("Caddy", "caddyserver:caddy"),
    "basehttp": ("BaseHTTPServer", None),
    "simplehttp": ("SimpleHTTPServer", None),
}


def server_product(server: str | None) -> tuple[str, str | None, str | None] | None:
    """(product, version, cpe vendor:product) from a Server header, or None."""
    if not server:
        return None
    m = _SERVER.match(server.strip())
    if not m:
        return None
    name, version = m.group(1), m.group(2)
    product, cpe = KNOWN_SERVERS.get(name.lower(), (name, None))
    return product, version, cpe
