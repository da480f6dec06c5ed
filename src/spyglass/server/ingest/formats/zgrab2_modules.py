"""What zgrab2's modules other than http, tls and ssh found, as banner members: where each listens
when zgrab2 wrote no port, and the product and version its result carries.

Ports and transports are zgrab2's own (each module's ``DefaultPort`` in its source, its UDP modules
dialled over UDP): records written before zgrab2 wrote the port scanned that port unless told
otherwise. Results are read defensively: any member may be missing or of another type.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from spyglass.server.ingest.formats.services import crawler, greeting_members

# zgrab2's modules and their default ports ("banner" has none of its own: it grabs what it is pointed at).
PORTS = {
    "amqp091": 5672, "bacnet": 47808, "checkpoint": 264, "codesys2": 1200, "dnp3": 20000, "drda": 50000,
    "enip": 44818, "fox": 1911, "ftp": 21, "http": 80, "imap": 143, "ipp": 631, "jarm": 443, "managesieve": 4190,
    "memcached": 11211, "modbus": 502, "mongodb": 27017, "mqtt": 1883, "mssql": 1433, "mysql": 3306, "ntp": 123,
    "omronfins": 9600, "oracle": 1521, "pop3": 110, "postgres": 5432, "pptp": 1723, "rdp": 3389, "redis": 6379,
    "siemens": 102, "smb": 445, "smtp": 25, "socks5": 1080, "ssh": 22, "telnet": 23, "tls": 443,
}  # fmt: skip
UDP = frozenset({"ntp", "bacnet", "omronfins"})
# Modules whose result is what the server said, as text: ``data`` is that text, in the order it was said.
SAID = ("banner", "ehlo", "helo", "auth_tls", "starttls", "help", "noop", "quit", "close")
MAX_DATA = 64 << 10  # characters of ``data`` made of a result's fields


def _obj(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value: object) -> str | None:
    """A text member, stripped (zgrab2 keeps the CR of a line: ``"1.6.38\\r"``); None for anything else."""
    return value.strip() or None if isinstance(value, str) else None


def fields_text(result: dict) -> str:
    """``data`` of a result that is not text: its scalar fields (and those one object down) as
    ``name: value`` lines, so that free-text search finds what the module read."""
    out: list[str] = []
    for name, value in result.items():
        if name == "tls":
            continue
        inner = value.items() if isinstance(value, dict) else [("", value)]
        for key, one in inner:
            if isinstance(one, str | int | float | bool):
                out.append(f"{name}{'.' + key if key else ''}: {one}")
    return "\n".join(out)[:MAX_DATA]


def _product(name: str, version: str | None, cpe: str | None = None) -> dict:
    return crawler().base.cpe_members(name, version, cpe)


def mysql(result: dict) -> dict:
    version = _str(result.get("server_version"))  # "8.0.3-rc-log", or MariaDB's "5.5.5-10.3.9-MariaDB"
    maria = re.search(r"(?:^5\.5\.5-)?(\d[\w.]*)-MariaDB", version or "")
    if maria:
        return _product("MariaDB", maria[1], "mariadb:mariadb")
    return _product("MySQL", version, "mysql:mysql")


def postgres(result: dict) -> dict:
    # server_parameters, where it authenticated: "server_version=10.1,TimeZone=UTC" (a string, as zgrab2 writes it)
    said = result.get("server_parameters")
    found = re.search(r"(?:^|,)server_version=([^,]+)", said) if isinstance(said, str) else None
    return _product("PostgreSQL DB", found[1].strip() if found else None, "postgresql:postgresql")


def redis(result: dict) -> dict:
    info = crawler().redis.sections(result["info_response"]) if isinstance(result.get("info_response"), str) else {}
    version = _str(result.get("version")) or _str(info.get("server", {}).get("redis_version"))
    if version is None and not info and result.get("ping_response") != "PONG":
        return {}  # (an answer that is no Redis's)
    out = _product("Redis key-value store", version, "redis:redis")
    if info:
        out["redis"] = info  # as the crawler keeps INFO
    return out


def mongodb(result: dict) -> dict:
    return _product("MongoDB", _str(_obj(result.get("build_info")).get("version")), "mongodb:mongodb")


def amqp091(result: dict) -> dict:
    said = _obj(result.get("server_properties"))
    product = _str(said.get("product"))
    return _product(product, _str(said.get("version"))) if product else {}


def version_of(name: str, cpe: str) -> Callable[[dict], dict]:
    """A module whose result says the server's version in ``version``."""
    return lambda result: _product(name, _str(result.get("version")), cpe)


PRODUCTS: dict[str, Callable[[dict], dict]] = {
    "mysql": mysql,
    "postgres": postgres,
    "redis": redis,
    "mongodb": mongodb,
    "amqp091": amqp091,
    "memcached": version_of("Memcached", "memcached:memcached"),
    "mssql": version_of("Microsoft SQL Server", "microsoft:sql_server"),
}


def members(protocol: str, result: dict) -> dict:
    """``data`` and the product of a module's result (ftp and smtp read by the crawler's parsers)."""
    said = [result[k] for k in SAID if isinstance(result.get(k), str)]
    out = greeting_members(protocol, "".join(said)) if said else {"data": fields_text(result)}
    if protocol == "redis" and isinstance(result.get("info_response"), str):
        out["data"] = result["info_response"]  # what INFO said, as the crawler's redis banner has it
    out.update(PRODUCTS[protocol](result) if protocol in PRODUCTS else {})
    return out
