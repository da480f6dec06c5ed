"""Location and network owner of an address, offline, from MaxMind-format databases the user names
(GeoLite2 or DB-IP Lite City/Country and ASN, GeoIP2 ISP: any mix), read with MaxMind's own reader.

``SPYGLASS_GEOIP`` holds the files (separated by ``os.pathsep``); ``spyglass import --geoip`` and
``spyglass serve --geoip`` set it for their processes and the workers they start. A banner a
scanner's file gives, missing them, takes what the databases say of its address in the members a
collected banner has: ``location`` (``country_code``, ``country_name``, ``city``, ``region_code``,
``postal_code``, ``latitude``, ``longitude``), ``asn`` (``"AS64496"``), ``org`` (the ISP database's
organization, else the AS's) and ``isp`` (the ISP database's, else the AS organization). Where no
database is named or none knows the address, nothing is added: never a guess.
"""

from __future__ import annotations

import functools
import os

import maxminddb

from spyglass.server.shaping import LOCATION

ENV = "SPYGLASS_GEOIP"


class GeoError(Exception):
    """A database that cannot be used, said in one line."""


def configured() -> tuple[str, ...]:
    """The databases SPYGLASS_GEOIP names (none: empty). Asked for every banner a scanner's file
    gives: the common case, none named, costs one look-up."""
    named = os.environ.get(ENV)
    return _split(named) if named else ()


@functools.lru_cache(maxsize=8)
def _split(named: str) -> tuple[str, ...]:
    return tuple(p for p in named.split(os.pathsep) if p.strip())


def use(paths: list[str]) -> None:
    """Name ``paths`` in SPYGLASS_GEOIP (for this process and those it starts), once each opens:
    GeoError for the first that is missing or not a MaxMind database."""
    _readers(tuple(paths))
    os.environ[ENV] = os.pathsep.join(paths)


@functools.cache
def _readers(paths: tuple[str, ...]) -> tuple[maxminddb.Reader, ...]:
    readers = []
    for path in paths:
        try:
            readers.append(maxminddb.open_database(path))
        except FileNotFoundError:
            raise GeoError(f"geoip: no such file: {path}") from None
        except (OSError, ValueError, maxminddb.InvalidDatabaseError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a MaxMind database"
            raise GeoError(f"geoip: cannot read {path}: {why}") from None
    return tuple(readers)


def _obj(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _name(value: object) -> str | None:
    names = _obj(_obj(value).get("names"))
    name = names.get("en") or next(iter(names.values()), None)
    return name if isinstance(name, str) else None


def lookup(ip: str) -> dict:
    """What the configured databases say of ``ip``, as banner members ({} where they say nothing)."""
    paths = configured()
    if not paths:
        return {}
    location: dict = {}
    owner: dict = {}
    for reader in _readers(paths):
        try:
            record = _obj(reader.get(ip))
        except ValueError:  # (an IPv6 address in an IPv4 database)
            continue
        country = _obj(record.get("country"))
        coordinates = _obj(record.get("location"))
        subdivisions = record.get("subdivisions")
        region = _obj(subdivisions[0]) if isinstance(subdivisions, list) and subdivisions else {}
        found = {
            "city": _name(record.get("city")),
            "region_code": region.get("iso_code"),
            "postal_code": _obj(record.get("postal")).get("code"),
            "country_code": country.get("iso_code"),
            "country_name": _name(country),
            "latitude": coordinates.get("latitude"),
            "longitude": coordinates.get("longitude"),
        }
        location.update({k: v for k, v in found.items() if v is not None and k not in location})
        number = record.get("autonomous_system_number")
        if isinstance(number, int) and not isinstance(number, bool):
            owner.setdefault("asn", f"AS{number}")
        for member, keys in (("org", ("organization", "autonomous_system_organization")), ("isp", ("isp",))):
            for key in keys:
                if isinstance(record.get(key), str) and record[key]:
                    owner.setdefault(f"{member}:{key}", record[key])
    out: dict = {}
    if location:
        out["location"] = {k: location.get(k) for k in LOCATION}
    if "asn" in owner:
        out["asn"] = owner["asn"]
    org = owner.get("org:organization") or owner.get("org:autonomous_system_organization")
    if org:
        out["org"] = org
    isp = owner.get("isp:isp") or owner.get("org:autonomous_system_organization")
    if isp:
        out["isp"] = isp
    return out


def locate(banner: dict) -> dict:
    """``banner`` with the members it lacks that the databases know of its address (itself, changed)."""
    if not configured():
        return banner
    ip = banner.get("ip_str") or banner.get("ipv6")
    found = lookup(ip) if isinstance(ip, str) else {}
    have = _obj(banner.get("location"))
    if "location" in found and not have.get("country_code"):
        banner["location"] = {**found["location"], **{k: v for k, v in have.items() if v is not None}}
    for member in ("asn", "org", "isp"):
        if member in found and not banner.get(member):
            banner[member] = found[member]
    return banner
