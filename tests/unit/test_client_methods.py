"""Every method of every client, over httpx.MockTransport: the request it sends (method, path with
the namespace, query with the key, form or JSON body), the model a seed-shaped answer parses into,
whether it may be repeated after a failure, and how each error status is mapped."""

from __future__ import annotations

import hashlib
import inspect
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from spyglass import models as m
from spyglass.client import (
    APIError,
    AuthenticationError,
    BadRequest,
    Clients,
    Forbidden,
    NoCredits,
    NotFound,
    RateLimited,
    ResponseFormatError,
    RetryPolicy,
    ServerError,
    StreamDebug,
)
from spyglass.client.base import HostClient
from spyglass.config import Profile

KEY = "k3y" * 8
NS = "acme"  # not the default, so a path that forgets the namespace fails
URL = "http://api.test"
BANNER = {
    "ip": 3323068423,
    "ip_str": "198.18.0.7",
    "port": 443,
    "transport": "tcp",
    "timestamp": "2026-01-02T03:04:05.678901",
    "data": "HTTP/1.1 200 OK",
    "ssl": {"cert": {"serial": 4.99e36}},
    "asn": 13335,
    f"_{NS}": {"module": "https", "crawler": "c"},
}
ALERT = {
    "id": "OYPRB8IR9Z35AZPR",
    "name": "office",
    "created": "2026-01-02T03:04:05.678901",
    "filters": {"ip": ["198.18.0.0/24"]},
    "size": 256,
    "expires": 0,
    "triggers": {},
}
NOTIFIER = {"id": "default", "provider": "email", "description": None, "args": {"to": "a@example.org"}}
SAVED = {
    "votes": 3,
    "description": "",
    "tags": ["webcam"],
    "timestamp": "2026-01-02T03:04:05",
    "title": "Webcams",
    "query": "webcam",
}
LOC = {"city": "Amsterdam", "country": "NL", "latlon": "52.37,4.89"}
PING = {
    "ip": "198.18.0.7",
    "is_alive": True,
    "min_rtt": 1.0,
    "avg_rtt": 1.5,
    "max_rtt": 2.0,
    "rtts": [1.0, 2.0],
    "packets_sent": 2,
    "packets_received": 2,
    "packet_loss": 0.0,
    "from_loc": LOC,
}
DNS = {"answers": [{"type": "A", "value": "198.18.0.7"}], "from_loc": LOC}
SUCCESS = {"success": True}


@dataclass
class Case:
    client: str  # attribute of Clients
    call: str
    args: tuple
    method: str
    path: str  # full URL path, host prefix and namespace included
    params: dict[str, str] = field(default_factory=dict)  # query, without the key
    body: Any = None  # the canned answer
    check: Callable[[Any], bool] = lambda r: True
    kwargs: dict = field(default_factory=dict)
    form: dict[str, str] | None = None
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    repeats: bool | None = None  # may it be sent again after a 503? default: GET, PUT, DELETE

    @property
    def id(self) -> str:
        return f"{self.client}.{self.call}:{self.path}"


N = f"/{NS}"
DOWNLOADS = Path(tempfile.mkdtemp(prefix="spyglass-downloads-"))
CASES = [
    # search
    Case(
        "search",
        "host",
        ("198.18.0.7",),
        "GET",
        f"{N}/host/198.18.0.7",
        {"history": "true", "minify": "false"},
        {"ip_str": "198.18.0.7", "ports": [443], "data": [BANNER]},
        kwargs={"history": True},
        check=lambda r: (
            isinstance(r, m.HostRecord) and r.data[0].ssl["cert"]["serial"] == 4.99e36 and r.data[0].module == "https"
        ),
    ),
    Case(
        "search",
        "count",
        ("port:22",),
        "GET",
        f"{N}/host/count",
        {"query": "port:22", "facets": "country:3,org"},
        {"matches": [], "total": 7, "facets": {"org": [{"count": 7, "value": "Acme"}]}},
        kwargs={"facets": ["country:3", "org"]},
        check=lambda r: r.total == 7 and r.facets["org"][0].value == "Acme",
    ),
    Case(
        "search",
        "search",
        ("nginx port:80",),
        "GET",
        f"{N}/host/search",
        {"query": "nginx port:80", "page": "2", "minify": "false"},
        {"matches": [BANNER], "total": 1},
        kwargs={"page": 2, "minify": False},
        headers={"X-Query-Credits": "41"},
        repeats=False,
        check=lambda r: isinstance(r, m.SearchResponse) and r.matches[0].to_api() == BANNER,
    ),
    Case(
        "search",
        "select",
        ("ssh", ["ip_str", "ssl.cert.serial"]),
        "GET",
        f"{N}/host/search",
        {"query": "ssh", "fields": "ip_str,ssl.cert.serial", "page": "1"},
        {"matches": [{"ip_str": "198.18.0.7", "ssl.cert.serial": 4.99e36}], "total": 1},
        repeats=False,
        check=lambda r: isinstance(r, m.SelectedFields) and r.matches[0]["ssl.cert.serial"] == 4.99e36,
    ),
    Case(
        "search", "facets", (), "GET", f"{N}/host/search/facets", body=["asn", "port"], check=lambda r: r[1] == "port"
    ),
    Case("search", "filters", (), "GET", f"{N}/host/search/filters", body=["net", "port"], check=lambda r: "net" in r),
    Case(
        "search",
        "tokens",
        ("apache port:80",),
        "GET",
        f"{N}/host/search/tokens",
        {"query": "apache port:80"},
        {"attributes": {"ports": [80]}, "errors": [], "string": "apache", "filters": ["port"]},
        check=lambda r: isinstance(r, m.SearchTokens) and r.filters == ["port"],
    ),
    # scans
    Case("scans", "ports", (), "GET", f"{N}/ports", body=[22, 80], check=lambda r: r == [22, 80]),
    Case("scans", "protocols", (), "GET", f"{N}/protocols", body={"http": "web"}, check=lambda r: r["http"] == "web"),
    Case(
        "scans",
        "submit",
        (["198.18.0.7", "198.18.1.0/24"],),
        "POST",
        f"{N}/scan",
        form={"ips": "198.18.0.7,198.18.1.0/24"},
        body={"id": "S1", "count": 257, "credits_left": 43},
        repeats=False,
        check=lambda r: isinstance(r, m.ScanSubmission) and r.credits_left == 43,
    ),
    Case(
        "scans",
        "submit",
        ({"198.18.0.7": [(80, "http")]},),
        "POST",
        f"{N}/scan",
        form={"ips": '{"198.18.0.7": [[80, "http"]]}'},
        body={"id": "S2", "count": 1, "credits_left": 42},
        repeats=False,
        check=lambda r: r.id == "S2",
    ),
    Case(
        "scans",
        "internet",
        (8080, "http"),
        "POST",
        f"{N}/scan/internet",
        form={"port": "8080", "protocol": "http"},
        body={"id": "S3"},
        repeats=False,
        check=lambda r: r.id == "S3",
    ),
    Case(
        "scans",
        "list",
        (),
        "GET",
        f"{N}/scans",
        body={"matches": [{"id": "S1", "status": "DONE", "size": 2}], "total": 1},
        check=lambda r: r.matches[0].status == m.ScanState.DONE,
    ),
    Case(
        "scans",
        "status",
        ("S/1",),
        "GET",
        f"{N}/scan/S%2F1",
        body={"id": "S/1", "count": 2, "status": "PROCESSING"},
        check=lambda r: isinstance(r, m.ScanStatus) and r.count == 2,
    ),
    Case(
        "scans",
        "cancel",
        ("S/1",),
        "DELETE",
        f"{N}/scan/S%2F1",
        body={"id": "S/1", "count": 2, "status": "CANCELLED"},
        check=lambda r: r.status == m.ScanState.CANCELLED,
    ),
    # alerts
    Case(
        "alerts",
        "create",
        ("office", ["198.18.0.0/24"]),
        "POST",
        f"{N}/alert",
        kwargs={"expires": 60},
        json={"name": "office", "filters": {"ip": ["198.18.0.0/24"]}, "expires": 60},
        body=ALERT,
        repeats=False,
        check=lambda r: isinstance(r, m.Alert) and r.filters.ip == ["198.18.0.0/24"],
    ),
    Case("alerts", "get", ("A1",), "GET", f"{N}/alert/A1/info", body=ALERT, check=lambda r: r.name == "office"),
    Case("alerts", "list", (), "GET", f"{N}/alert/info", body=[ALERT], check=lambda r: r[0].size == 256),
    Case(
        "alerts",
        "update",
        ("A1", ["198.18.2.0/24"]),
        "POST",
        f"{N}/alert/A1",
        json={"filters": {"ip": ["198.18.2.0/24"]}},
        body=ALERT,
        repeats=True,
        check=lambda r: isinstance(r, m.Alert),
    ),
    Case("alerts", "delete", ("A1",), "DELETE", f"{N}/alert/A1", body=SUCCESS, check=lambda r: r is True),
    Case(
        "alerts",
        "triggers",
        (),
        "GET",
        f"{N}/alert/triggers",
        body=[{"name": "malware", "rule": "tags:malware", "description": "Compromised"}],
        check=lambda r: isinstance(r[0], m.Trigger) and r[0].rule == "tags:malware",
    ),
    Case(
        "alerts",
        "enable_triggers",
        ("A1", ["malware", "vulnerable"]),
        "PUT",
        f"{N}/alert/A1/trigger/malware,vulnerable",
        body=SUCCESS,
        check=lambda r: r is True,
    ),
    Case(
        "alerts",
        "disable_triggers",
        ("A1", "malware"),
        "DELETE",
        f"{N}/alert/A1/trigger/malware",
        body={"success": False},
        check=lambda r: r is False,
    ),
    Case(
        "alerts",
        "ignore_service",
        ("A1", "malware", "198.18.0.7:80"),
        "PUT",
        f"{N}/alert/A1/trigger/malware/ignore/198.18.0.7:80",
        body=SUCCESS,
        check=lambda r: r is True,
    ),
    Case(
        "alerts",
        "unignore_service",
        ("A1", "malware", "198.18.0.7:80"),
        "DELETE",
        f"{N}/alert/A1/trigger/malware/ignore/198.18.0.7:80",
        body=SUCCESS,
        check=lambda r: r is True,
    ),
    Case("alerts", "add_notifier", ("A1", "N1"), "PUT", f"{N}/alert/A1/notifier/N1", body=SUCCESS, check=lambda r: r),
    Case(
        "alerts",
        "remove_notifier",
        ("A1", "N1"),
        "DELETE",
        f"{N}/alert/A1/notifier/N1",
        body=SUCCESS,
        check=lambda r: r,
    ),
    # notifiers: not under the namespace
    Case(
        "notifiers",
        "list",
        (),
        "GET",
        "/notifier",
        body={"matches": [NOTIFIER], "total": 1},
        check=lambda r: r.matches[0].args["to"] == "a@example.org",
    ),
    Case(
        "notifiers",
        "providers",
        (),
        "GET",
        "/notifier/provider",
        body={"email": {"required": ["to"]}},
        check=lambda r: r["email"].required == ["to"],
    ),
    Case(
        "notifiers",
        "create",
        ("email", {"to": "a@example.org"}),
        "POST",
        "/notifier",
        kwargs={"description": "ops"},
        form={"provider": "email", "to": "a@example.org", "description": "ops"},
        body={"id": "N1", "success": True},
        repeats=False,
        check=lambda r: isinstance(r, m.NotifierCreated) and r.id == "N1",
    ),
    Case("notifiers", "get", ("N1",), "GET", "/notifier/N1", body=NOTIFIER, check=lambda r: r.provider == "email"),
    Case(
        "notifiers",
        "update",
        ("N1", {"to": "b@example.org"}),
        "PUT",
        "/notifier/N1",
        form={"to": "b@example.org"},
        body={"id": "N1", "success": True},
        check=lambda r: r.success,
    ),
    Case("notifiers", "delete", ("N1",), "DELETE", "/notifier/N1", body=SUCCESS, check=lambda r: r is True),
    Case(
        "notifiers",
        "test",
        ("N1",),
        "POST",
        "/notifier/N1/test",
        body={"id": "N1", "success": False, "detail": "HTTP 503 Service Unavailable"},
        repeats=False,  # a second test send is a second notification
        check=lambda r: isinstance(r, m.NotifierTest) and not r.success and r.detail.startswith("HTTP 503"),
    ),
    Case(
        "alerts",
        "notifications",
        ("A1",),
        "GET",
        f"{N}/alert/A1/notifications",
        body=[
            {
                "at": "2026-11-20T10:00:00.000000",
                "event": "A1:127.0.0.1:80/tcp:x",
                "notifier": "N1",
                "provider": "webhook",
                "attempt": 2,
                "outcome": "sent",
                "detail": "HTTP 200",
                "service": "127.0.0.1:80",
                "triggers": ["new_service"],
            }
        ],  # fmt: skip
        check=lambda r: isinstance(r[0], m.Notification) and r[0].outcome == "sent" and r[0].attempt == 2,
    ),
    # directory
    Case(
        "directory",
        "queries",
        (),
        "GET",
        f"{N}/query",
        {"page": "2", "sort": "votes", "order": "desc"},
        {"matches": [SAVED], "total": 1},
        kwargs={"page": 2, "sort": "votes", "order": "desc"},
        check=lambda r: isinstance(r, m.SavedQueryList) and r.matches[0].query == "webcam",
    ),
    Case(
        "directory",
        "search",
        ("webcam",),
        "GET",
        f"{N}/query/search",
        {"query": "webcam", "page": "1"},
        {"matches": [SAVED], "total": 1},
        check=lambda r: r.total == 1,
    ),
    Case(
        "directory",
        "tags",
        (),
        "GET",
        f"{N}/query/tags",
        {"size": "5"},
        {"matches": [{"count": 76, "value": "webcam"}], "total": 3782},
        kwargs={"size": 5},
        check=lambda r: isinstance(r, m.QueryTags) and r.matches[0].count == 76,
    ),
    Case(
        "directory",
        "save",
        ("Webcams", "webcam"),
        "POST",
        f"{N}/query",
        {"title": "Webcams", "query": "webcam", "description": "cams", "tags": "iot,cam"},
        {**SAVED, "id": 41},
        kwargs={"description": "cams", "tags": ["iot", "cam"]},
        check=lambda r: isinstance(r, m.SavedQuery) and r.id == 41,
    ),
    Case(
        "directory",
        "vote",
        (41,),
        "POST",
        f"{N}/query/41/vote",
        {"value": "-1"},
        {**SAVED, "id": 41, "votes": 2},
        kwargs={"value": -1},
        check=lambda r: r.votes == 2,
        repeats=True,
    ),
    Case(
        "directory",
        "add_tags",
        (41, "a,b"),
        "POST",
        f"{N}/query/41/tags",
        {"tags": "a,b"},
        {**SAVED, "id": 41},
        check=lambda r: r.id == 41,
        repeats=True,
    ),
    Case("directory", "delete", (41,), "DELETE", f"{N}/query/41", body=SUCCESS, check=lambda r: r.success),
    # data
    Case(
        "data",
        "datasets",
        (),
        "GET",
        f"{N}/data",
        body=[{"name": "raw-daily", "scope": "monthly"}],
        check=lambda r: isinstance(r[0], m.Dataset),
    ),
    Case(
        "data",
        "files",
        ("raw-daily",),
        "GET",
        f"{N}/data/raw-daily",
        body=[{"url": "https://x/f.json.gz", "timestamp": 1700000000, "sha1": "ab", "name": "f.json.gz", "size": 9}],
        check=lambda r: isinstance(r[0], m.DatasetFile) and r[0].size == 9,
    ),
    Case(
        "data",
        "file",
        ("raw-daily", "g.json.gz"),
        "GET",
        f"{N}/data/raw-daily",
        body=[
            {"url": "https://x/f.json.gz", "timestamp": 1700000000, "sha1": "ab", "name": "f.json.gz", "size": 9},
            {"url": "https://x/g.json.gz", "timestamp": 1700000000, "sha1": "cd", "name": "g.json.gz", "size": 7},
        ],
        check=lambda r: isinstance(r, m.DatasetFile) and r.sha1 == "cd",
    ),
    Case(  # the file's bytes here are the JSON answer '"gz"'; its SHA-1 is checked, then it is renamed
        "data",
        "download",
        (
            m.DatasetFile(
                url=f"{URL}{N}/data/daily/f.json.gz",
                timestamp=1,
                sha1=hashlib.sha1(b'"gz"').hexdigest(),
                name="f.json.gz",
                size=4,
            ),
            DOWNLOADS / "f.json.gz",
        ),
        "GET",
        f"{N}/data/daily/f.json.gz",
        body="gz",
        check=lambda r: r == DOWNLOADS / "f.json.gz" and r.read_bytes() == b'"gz"',
    ),
    # org
    Case(
        "org",
        "get",
        (),
        "GET",
        "/org",
        body={"id": "O1", "name": "Acme", "admins": [{"username": "ada"}]},
        check=lambda r: isinstance(r, m.Organization) and r.admins[0].username == "ada",
    ),
    Case(
        "org",
        "add_member",
        ("bob",),
        "PUT",
        "/org/member/bob",
        {"notify": "true"},
        SUCCESS,
        kwargs={"notify": True},
        check=lambda r: r is True,
    ),
    Case("org", "remove_member", ("bob",), "DELETE", "/org/member/bob", body=SUCCESS, check=lambda r: r is True),
    Case(
        "org",
        "invitations",
        (),
        "GET",
        "/org/invitations",
        body=[{"id": "O1", "name": "Acme", "invited": "2026-01-01T00:00:00"}],
        check=lambda r: r[0].id == "O1" and r[0].name == "Acme",
    ),
    Case(
        "org",
        "accept",
        ("O/1",),
        "POST",
        "/org/invitations/O%2F1",
        {"accept": "true"},
        SUCCESS,
        repeats=False,
        check=lambda r: r is True,
    ),
    # account
    Case(
        "account",
        "profile",
        (),
        "GET",
        "/account/profile",
        body={"member": True, "credits": 5, "display_name": None},
        check=lambda r: isinstance(r, m.AccountProfile) and r.credits == 5,
    ),
    Case(
        "account",
        "api_info",
        (),
        "GET",
        "/api-info",
        body={"plan": "dev", "query_credits": 99, "scan_credits": 98, "usage_limits": {"monitored_ips": 16}},
        check=lambda r: isinstance(r, m.ApiInfo) and r.plan == "dev",
    ),
    # dns
    Case(
        "dns",
        "domain",
        ("example.org",),
        "GET",
        "/dns/domain/example.org",
        {"history": "false", "type": "A", "page": "1"},
        {"domain": "example.org", "data": [{"subdomain": "www", "type": "A", "value": "198.18.0.7"}]},
        kwargs={"type": "A"},
        repeats=False,
        check=lambda r: isinstance(r, m.DomainInfo) and r.data[0].value == "198.18.0.7",
    ),
    Case(
        "dns",
        "resolve",
        (["a.example", "b.example"],),
        "GET",
        "/dns/resolve",
        {"hostnames": "a.example,b.example"},
        {"a.example": "198.18.0.7", "b.example": None},
        check=lambda r: r["b.example"] is None,
    ),
    Case(
        "dns",
        "reverse",
        ("198.18.0.7",),
        "GET",
        "/dns/reverse",
        {"ips": "198.18.0.7"},
        {"198.18.0.7": ["a.example"]},
        check=lambda r: r["198.18.0.7"] == ["a.example"],
    ),
    # tools
    Case(
        "tools",
        "http_headers",
        (),
        "GET",
        "/tools/httpheaders",
        body={"Host": "api.test"},
        check=lambda r: r["Host"] == "api.test",
    ),
    Case("tools", "my_ip", (), "GET", "/tools/myip", body="127.0.0.1", check=lambda r: r == "127.0.0.1"),
    Case("tools", "backend_info", (), "GET", "/spyglass/info", body={"banners": 3}, check=lambda r: r["banners"] == 3),
    # stream host: newline-delimited banners (a list body here), under its own prefix and the namespace
    Case(
        "stream",
        "banners",
        (),
        "GET",
        f"/stream{N}/banners",
        {"t": "json"},
        [BANNER, {"event": "debug", "discarded": 4}],
        check=lambda r: r[0].address == "198.18.0.7" and r[1] == StreamDebug(4),
    ),
    Case(
        "stream",
        "asn",
        (["AS1", "AS2"],),
        "GET",
        f"/stream{N}/asn/AS1,AS2",
        {"t": "json"},
        [BANNER],
        check=lambda r: r[0].port == 443,
    ),
    Case(
        "stream",
        "countries",
        ("NL",),
        "GET",
        f"/stream{N}/countries/NL",
        {"t": "json", "debug": "1"},
        [BANNER],
        kwargs={"debug": True},
        check=lambda r: len(r) == 1,
    ),
    Case(
        "stream",
        "ports",
        ([22, 443],),
        "GET",
        f"/stream{N}/ports/22,443",
        {"t": "json"},
        [BANNER],
        check=lambda r: len(r) == 1,
    ),
    Case(
        "stream",
        "vulns",
        (["CVE-2014-0160"],),
        "GET",
        f"/stream{N}/vulns/CVE-2014-0160",
        {"t": "json"},
        [BANNER],
        check=lambda r: len(r) == 1,
    ),
    Case(
        "stream",
        "alert",
        (),
        "GET",
        f"/stream{N}/alert",
        {"t": "json"},
        [BANNER],
        check=lambda r: r[0].address == "198.18.0.7",
    ),
    Case(
        "stream",
        "alert",
        ("OYPRB8IR9Z35AZPR",),
        "GET",
        f"/stream{N}/alert/OYPRB8IR9Z35AZPR",
        {"t": "json"},
        [BANNER],
        check=lambda r: len(r) == 1,
    ),
    # trends host
    Case(
        "trends",
        "search",
        ("nginx",),
        "GET",
        "/trends/api/v1/search",
        {"query": "nginx", "facets": "product"},
        {
            "total": 3,
            "matches": [{"month": "2026-01", "count": 3}],
            "facets": {"product": [{"key": "2026-01", "values": [{"count": 3, "value": "nginx"}]}]},
        },
        kwargs={"facets": "product"},
        check=lambda r: isinstance(r, m.TrendsResponse) and r.matches[0].count == 3,
    ),
    Case("trends", "filters", (), "GET", "/trends/api/v1/search/filters", body=["port"], check=lambda r: r == ["port"]),
    Case(
        "trends",
        "facets",
        (),
        "GET",
        "/trends/api/v1/search/facets",
        body=["product"],
        check=lambda r: r == ["product"],
    ),
    # geonet host: no key
    Case(
        "geonet",
        "ping",
        ("198.18.0.7",),
        "GET",
        "/geonet/api/ping/198.18.0.7",
        body=PING,
        check=lambda r: isinstance(r, m.PingResult) and r.from_loc.coordinates == (52.37, 4.89),
    ),
    Case(
        "geonet",
        "geoping",
        ("198.18.0.7",),
        "GET",
        "/geonet/api/geoping/198.18.0.7",
        body=[PING],
        headers={"X-Geonet-Missing": '[{"agent": "http://b", "reason": "timeout"}]'},
        check=lambda r: r[0].is_alive and r.missing[0].reason == "timeout",
    ),
    Case(
        "geonet",
        "dns",
        ("example.org",),
        "GET",
        "/geonet/api/dns/example.org",
        {"rtype": "MX"},
        DNS,
        kwargs={"rtype": "MX"},
        check=lambda r: isinstance(r, m.DnsResult) and r.answers[0].type == "A",
    ),
    Case(
        "geonet",
        "geodns",
        ("example.org",),
        "GET",
        "/geonet/api/geodns/example.org",
        {"rtype": "A"},
        [DNS],
        check=lambda r: r[0].answers[0].value == "198.18.0.7" and r.missing == [],
    ),
]

STREAMING = {"stream"}


def clients_over(handler: Callable[[httpx.Request], httpx.Response], attempts: int = 1) -> Clients:
    profile = Profile(name="t", url=URL, key=KEY, namespace=NS, rate=None)
    return Clients.from_profile(
        profile, retry=RetryPolicy(attempts=attempts, base=0), http_transport=httpx.MockTransport(handler)
    )


def answer(case: Case) -> httpx.Response:
    if case.client in STREAMING:
        return httpx.Response(200, content=b"".join(json.dumps(b).encode() + b"\n" for b in case.body))
    return httpx.Response(200, json=case.body, headers=case.headers)


async def invoke(clients: Clients, case: Case) -> Any:
    kwargs = {**case.kwargs, "reconnect": False} if case.client in STREAMING else case.kwargs  # a mock's body ends
    result = getattr(getattr(clients, case.client), case.call)(*case.args, **kwargs)
    if case.client in STREAMING:
        return [item async for item in result]
    return await result


def public_methods(cls: type) -> set[str]:
    return {
        name
        for name, fn in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_") and name not in dir(HostClient)
    }


def test_the_table_covers_every_method_of_every_client():
    clients = clients_over(lambda r: httpx.Response(500))
    sections = {name: client for name, client in vars(clients).items() if isinstance(client, HostClient)}
    on_main = {name for name, client in sections.items() if client.transport is clients.transport}
    assert on_main == {"search", "scans", "alerts", "notifiers", "directory", "data", "org", "account", "dns", "tools"}
    assert set(sections) - on_main == {"stream", "trends", "geonet"}
    for name, client in sections.items():
        assert public_methods(type(client)) == {c.call for c in CASES if c.client == name}, name


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_method_sends_the_request_and_parses_the_answer(case):
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer(case)

    async with clients_over(handler) as clients:
        result = await invoke(clients, case)
    assert case.check(result), result
    (request,) = seen
    assert request.method == case.method
    assert request.url.raw_path.decode().split("?")[0] == case.path  # as sent, escapes included
    expected = {**case.params, **({} if case.client == "geonet" else {"key": KEY})}
    assert dict(request.url.params) == expected
    assert len(request.url.params.multi_items()) == len(expected)
    body = request.content
    if case.form is not None:
        assert request.headers["content-type"] == "application/x-www-form-urlencoded"
        assert {k: v[0] for k, v in parse_qs(body.decode(), keep_blank_values=True).items()} == case.form
    elif case.json is not None:
        assert json.loads(body) == case.json
    else:
        assert body == b""


@pytest.mark.parametrize("case", [c for c in CASES if c.client not in STREAMING], ids=lambda c: c.id)
async def test_only_calls_safe_to_repeat_are_repeated_after_a_503(case):
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        return answer(case) if len(sent) > 1 else httpx.Response(503, json={"error": "busy"})

    repeats = case.method in ("GET", "PUT", "DELETE") if case.repeats is None else case.repeats
    async with clients_over(handler, attempts=2) as clients:
        if repeats:
            assert case.check(await invoke(clients, case))
        else:  # it may have reached the server and spent credits: never sent twice
            with pytest.raises(ServerError):
                await invoke(clients, case)
    assert len(sent) == (2 if repeats else 1)


async def test_credits_follow_headers_and_bodies():
    bodies = {
        "/api-info": {"plan": "dev", "query_credits": 99, "scan_credits": 98, "monitored_ips": 16},
        f"{N}/scan": {"id": "S", "count": 1, "credits_left": 12},
        f"{N}/host/search": {"matches": [], "total": 0},
    }

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json=bodies[request.url.path],
            headers={"X-Query-Credits": "41"} if request.url.path.endswith("search") else {},
        )

    async with clients_over(handler) as clients:
        await clients.account.api_info()
        assert (clients.credits.query, clients.credits.scan, clients.credits.plan, clients.credits.monitored_ips) == (
            99,
            98,
            "dev",
            16,
        )
        await clients.scans.submit("198.18.0.7")
        await clients.search.search("port:22")
        assert (clients.credits.query, clients.credits.scan) == (41, 12)


async def test_backend_info_is_none_from_other_services():
    async with clients_over(lambda r: httpx.Response(404, json={"error": "No such page"})) as clients:
        assert await clients.tools.backend_info() is None


async def test_user_input_cannot_change_the_path():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"id": "x", "count": 1, "status": "DONE"})

    async with clients_over(handler) as clients:
        await clients.scans.status("../../api-info?key=x#")
    assert seen[0].url.raw_path.decode().startswith(f"{N}/scan/..%2F..%2Fapi-info%3Fkey%3Dx%23")
    assert dict(seen[0].url.params) == {"key": KEY}


async def test_a_body_that_does_not_match_is_a_format_error():
    async with clients_over(lambda r: httpx.Response(200, json={"matches": [{"port": "x"}], "total": 1})) as clients:
        with pytest.raises(ResponseFormatError, match="does not match the API"):
            await clients.search.search("x")


ERRORS = [
    (400, {"error": "Invalid search query: bogus"}, BadRequest, "Invalid search query: bogus (HTTP 400)"),
    (401, {"error": "Invalid API key"}, AuthenticationError, "Invalid API key (HTTP 401)"),
    (402, {"error": "Insufficient query credits"}, NoCredits, "Insufficient query credits (HTTP 402)"),
    (403, {"error": "Access denied"}, Forbidden, "Access denied (HTTP 403)"),
    (404, {"error": "No information available for that IP."}, NotFound, "No information available"),
    (
        422,
        {"detail": [{"loc": ["query", "page"], "msg": "Input should be a valid integer", "type": "int_parsing"}]},
        BadRequest,
        "page: Input should be a valid integer (HTTP 422)",
    ),
    (429, {"error": "Rate limit reached"}, RateLimited, "Rate limit reached (HTTP 429)"),
    (
        500,
        "<html><title>500 Internal Server Error</title><body>trace</body></html>",
        ServerError,
        "500 Internal Server Error (HTTP 500)",
    ),
    (503, "upstream down", ServerError, "upstream down (HTTP 503)"),
    (418, {"detail": "I'm a teapot"}, APIError, "I'm a teapot (HTTP 418)"),
]


@pytest.mark.parametrize(("status", "body", "error", "message"), ERRORS, ids=[str(e[0]) for e in ERRORS])
async def test_error_status_maps_to_its_error(status, body, error, message):
    def handler(request: httpx.Request) -> httpx.Response:
        if isinstance(body, str):
            kind = "text/html" if body.startswith("<") else "text/plain"
            return httpx.Response(status, content=body.encode(), headers={"content-type": kind})
        return httpx.Response(status, json=body)

    async with clients_over(handler) as clients:
        with pytest.raises(error) as caught:
            await clients.search.count("port:22")
    assert type(caught.value) is error and caught.value.status == status
    assert message in str(caught.value) and KEY not in str(caught.value)
    if status == 422:
        assert caught.value.details[0]["loc"] == ["query", "page"]
