"""Banners as the API serves them: a stored banner is kept exactly as it came, and shaped here for
a response (the namespace's crawler member, minified, only some fields, the host view)."""

from __future__ import annotations

import functools
from typing import Any

import msgspec

from spyglass.exactjson import dumps, loads
from spyglass.server.banners.shape import normalize

LOCATION = (  # the service's location members, in its order (the host's, and what geoip fills)
    "city",
    "region_code",
    "area_code",
    "dma_code",
    "postal_code",
    "country_code",
    "country_code3",
    "country_name",
    "latitude",
    "longitude",
)

MINIFY_DROP = (("http", "html"), ("ssl", "chain"), ("opts", "raw"))


def for_namespace(banner: dict, namespace: str) -> dict:
    """A stored banner as this namespace serves it: only the crawler member is renamed (to
    ``_{namespace}``) and ``ip_str`` is added if the banner had none; every other member is
    exactly as imported."""
    shape = normalize(banner)
    target = f"_{namespace}"
    if shape.crawler and shape.crawler != target and target not in banner:
        banner = {(target if k == shape.crawler else k): v for k, v in banner.items()}
    if "ip_str" not in banner:
        banner["ip_str"] = shape.ip_str
    return banner


def minified(banner: dict) -> dict:
    for member, inner in MINIFY_DROP:
        if isinstance(banner.get(member), dict) and inner in banner[member]:
            banner[member] = {k: v for k, v in banner[member].items() if k != inner}
    return banner


def only_fields(banner: dict, fields: list[str]) -> dict:
    out: dict = {}
    for path in fields:
        value: Any = banner
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None:
            out[path] = value
    return out


def _strings(value: Any) -> list[str]:
    """The names a member holds: a list's strings, an object's keys, or one string."""
    if isinstance(value, dict):
        return [k for k in value if isinstance(k, str)]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return [value] if isinstance(value, str) else []


def host_record(banners: list[dict], history: bool, minify: bool) -> dict:
    """The host view of an address's banners (newest first); members read defensively."""
    latest = banners[0]
    shape = normalize(latest)
    current: dict[tuple, dict] = {}
    for b in banners:
        s = normalize(b)
        current.setdefault((s.port, s.transport), b)
    shown = banners if history else list(current.values())

    def union(member: str) -> list:
        return sorted({v for b in current.values() for v in _strings(b.get(member))})

    loc = latest.get("location")
    loc = loc if isinstance(loc, dict) else {}
    record: dict[str, Any] = {
        "ip": latest.get("ip"),
        "ip_str": shape.ip_str,
        "asn": latest.get("asn"),
        "isp": latest.get("isp"),
        "org": latest.get("org"),
        "os": next((b["os"] for b in banners if isinstance(b.get("os"), str) and b["os"]), None),
        "hostnames": union("hostnames"),
        "domains": union("domains"),
        "tags": union("tags"),
        "ports": sorted({port for port, _ in current}),
        "vulns": union("vulns"),
        "last_update": latest["timestamp"],
        **{k: loc.get(k) for k in LOCATION},
    }
    if not minify:
        record["data"] = shown
    return record


def seen_only(ip: str, seen: list[dict]) -> dict:
    """The host view of an address no banner has, that scans saw (up, ports not open: banners/seen.py)."""
    return {"ip_str": ip, "hostnames": [], "domains": [], "tags": [], "ports": [], "vulns": [], "data": []} | {
        "last_update": seen[0]["timestamp"]
    }


def served(body: bytes, namespace: str, minify: bool) -> bytes:
    """A stored banner's bytes as the API serves them: the stored bytes themselves when there is
    nothing to change (most banners: no decoding and encoding again), else the shaped banner. Only
    the top-level members that decide it are read (the rest is skipped unparsed)."""
    try:
        top = _top_level(namespace).decode(body)
    except msgspec.DecodeError:  # what msgspec refuses (a lone surrogate's escape): the long way
        top = None
    if top is not None and top.ip_str and top.crawler:  # nothing to add, nothing to rename
        if not minify or not any(f'"{inner}"'.encode() in bytes(getattr(top, m)) for m, inner in MINIFY_DROP):
            return body
        try:
            return _without_dropped(body)
        except msgspec.DecodeError:
            return dumps(minified(loads(body)))
    banner = loads(body)
    return dumps(for_namespace(minified(banner) if minify else banner, namespace))


_MEMBERS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_encode_members = msgspec.json.Encoder().encode


def _without_dropped(body: bytes) -> bytes:
    """``minified`` on the stored bytes: only the objects that lose a member are decoded, down
    to their own members, and every value is written back as the bytes it was (a search page of
    banners holding ``http.html`` is otherwise decoded and encoded whole)."""
    top = _MEMBERS.decode(body)
    for member, inner in MINIFY_DROP:
        raw = top.get(member)
        if raw is None or memoryview(raw)[:1] != b"{":  # minified drops only from an object (no copy)
            continue
        members = _MEMBERS.decode(raw)
        if members.pop(inner, None) is not None:
            top[member] = msgspec.Raw(_encode_members(members))
    return _encode_members(top)


@functools.cache
def _top_level(namespace: str) -> msgspec.json.Decoder:
    absent = msgspec.Raw()  # empty: the member is not there (JSON null is b"null")
    fields = [
        ("ip_str", msgspec.Raw, absent),
        ("crawler", msgspec.Raw, msgspec.field(default=absent, name=f"_{namespace}")),
        *((member, msgspec.Raw, absent) for member, _ in MINIFY_DROP),
    ]
    return msgspec.json.Decoder(msgspec.defstruct("TopLevel", fields))
