"""zgrab2's modules other than http, tls and ssh, in records shaped as zgrab2 writes them (its
published test data: ``{"ip", "domain", "data": {module: {"status", "protocol", "result",
"timestamp"}}}``, no port: zgrab2 wrote none before 2024), with the members its modules' results
carry (values as its own test runs against real servers recorded them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spyglass.server.ingest.formats import probes
from tests.formats.scans import import_files, read, served
from tests.formats.test_zgrab2 import certificate, entry, handshake

REDIS_INFO = (
    "# Server\r\nredis_version:5.0.4\r\nredis_mode:standalone\r\nos:Linux 4.9.125-linuxkit x86_64\r\n"
    "tcp_port:6379\r\n\r\n# Clients\r\nconnected_clients:1\r\n"
)
RESULTS = {  # module: (its result, the address it was run against)
    "mysql": {
        "protocol_version": 10,
        "server_version": "8.0.3-rc-log",
        "connection_id": 7,
        "capability_flags": {"CLIENT_SSL": True},
        "auth_plugin_name": "mysql_native_password",
    },
    "postgres": {
        "supported_versions": "FATAL:  unsupported frontend protocol 0.0: server supports 2.0 to 3.0",
        "startup_error": {"code": "28000", "message": "no PostgreSQL user name specified", "severity": "FATAL"},
        "is_ssl": True,
        "server_parameters": "TimeZone=UTC,server_version=10.1,server_encoding=UTF8",
    },
    "redis": {"ping_response": "PONG", "info_response": REDIS_INFO, "version": "5.0.4", "os": "Linux", "mode": "x"},
    "memcached": {"version": "1.6.38\r", "libevent_version": "2.1.12-stable\r", "stats": {"curr_items": 0}},
    "mssql": {"version": "14.0.3015", "instance_name": "\u0000", "prelogin_options": {"encrypt_mode": "ENCRYPT_ON"}},
    "ntp": {"version": 3, "time": "2018-04-06T19:39:39.477943897Z", "time_response": {"stratum": 0, "mode": 4}},
    "pop3": {"banner": "+OK Dovecot ready.\r\n", "help": "-ERR\r\n", "quit": "+OK\r\n"},
    "imap": {"banner": "* OK [CAPABILITY IMAP4rev1] Dovecot ready.\r\n", "close": "* BYE\r\n"},
    "telnet": {"banner": "Ubuntu 16.04.3 LTS\r\n5a3511f30de7 login: ", "will": [{"name": "Echo", "value": 1}]},
    "amqp091": {
        "version_major": 0,
        "version_minor": 9,
        "server_properties": {"product": "RabbitMQ", "version": "3.7.8", "platform": "Erlang/OTP 21.1"},
        "locales": ["en_US"],
    },
    "mongodb": {"build_info": {"version": "4.0.3", "git_version": "7ea530946fa7880364d88c8d8b6026bbc9ffa48c"}},
}


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def records() -> list[dict]:
    out = [
        {"ip": f"198.18.9.{i}", "domain": "target", "data": {name: entry(name, result)}}
        for i, (name, result) in enumerate(RESULTS.items(), 1)
    ]
    response = {"status_line": "200 OK", "status_code": 200, "request": {"url": {"scheme": "https", "host": "target"}}}
    out.append({"ip": "198.18.9.99", "domain": "target", "data": {"http": entry("http", {"response": response})}})
    return out


def test_modules_without_a_port_take_their_standard_one_and_say_so(tmp_path):
    tool, banners, unreadable = read(write(tmp_path / "zgrab2.json", records()))
    assert tool == "zgrab2" and unreadable == []
    by = {b["_shodan"]["module"]: b for b in banners}
    ports = {name: (b["port"], b["transport"]) for name, b in by.items()}
    assert ports == {
        "mysql": (3306, "tcp"),
        "postgres": (5432, "tcp"),
        "redis": (6379, "tcp"),
        "memcached": (11211, "tcp"),
        "mssql": (1433, "tcp"),
        "ntp": (123, "udp"),  # a UDP module
        "pop3": (110, "tcp"),
        "imap": (143, "tcp"),
        "telnet": (23, "tcp"),
        "amqp091": (5672, "tcp"),
        "mongodb": (27017, "tcp"),
        "https": (443, "tcp"),  # an https URL with no port: zgrab2 asked 443
    }
    assert {b["tool"]["port_from"] for n, b in by.items() if n != "https"} == {"module default"}
    assert by["https"]["tool"]["port_from"] == "url"


def test_modules_results_give_their_products_and_versions(tmp_path):
    _, banners, _ = read(write(tmp_path / "zgrab2.json", records()))
    by = {b["_shodan"]["module"]: b for b in banners}
    products = {name: (b.get("product"), b.get("version")) for name, b in by.items() if b.get("product")}
    expected = {
        "mysql": ("MySQL", "8.0.3-rc-log"),
        "postgres": ("PostgreSQL DB", "10.1"),
        "redis": ("Redis key-value store", "5.0.4"),
        "memcached": ("Memcached", "1.6.38"),
        "mssql": ("Microsoft SQL Server", "14.0.3015"),
        "amqp091": ("RabbitMQ", "3.7.8"),
        "mongodb": ("MongoDB", "4.0.3"),
    }
    if any(p.is_file() for p in probes.FILES):  # greetings as nmap's service probes name them
        expected |= {"imap": ("Dovecot imapd", None), "pop3": ("Dovecot pop3d", None)}
    assert products == expected
    assert by["mysql"]["cpe23"] == ["cpe:2.3:a:mysql:mysql:8.0.3-rc-log"]
    assert by["redis"]["redis"]["server"]["redis_mode"] == "standalone" and by["redis"]["data"] == REDIS_INFO
    assert by["telnet"]["data"] == RESULTS["telnet"]["banner"]
    assert by["pop3"]["data"].startswith("+OK Dovecot ready.\r\n") and "Dovecot" in by["imap"]["data"]
    assert "version: 3" in by["ntp"]["data"] and "time_response.stratum: 0" in by["ntp"]["data"]
    assert "server_properties.platform: Erlang/OTP 21.1" in by["amqp091"]["data"]


def test_mariadb_and_a_module_result_in_tls(tmp_path):
    leaf = certificate("db.example.test")
    maria = {"server_version": "5.5.5-10.3.9-MariaDB-1:10.3.9+maria~bionic", "tls": {"handshake_log": handshake(leaf)}}
    _, banners, _ = read(write(tmp_path / "z.json", [{"ip": "198.18.9.1", "data": {"mysql": entry("mysql", maria)}}]))
    (one,) = banners
    assert (one["product"], one["version"]) == ("MariaDB", "10.3.9")
    assert one["ssl"]["cert"]["subject"]["CN"] == "db.example.test"


def test_a_record_with_a_name_and_no_address_is_refused_in_words(tmp_path):
    redis = {"redis": entry("redis", RESULTS["redis"])}
    lines = [{"domain": "target", "data": redis}, {"domain": "198.18.9.7", "data": redis}, {"data": redis}]
    _, banners, unreadable = read(write(tmp_path / "zgrab2.json", lines))
    assert [(u.where, u.why) for u in unreadable] == [
        ("line 1", "no IP address: zgrab2 wrote only the name 'target' (a banner is of an address)"),
        ("line 3", "no IP address: zgrab2 wrote none (a banner is of an address)"),
    ]
    assert [(b["ip_str"], b["port"], "hostnames" in b) for b in banners] == [("198.18.9.7", 6379, False)]


@pytest.mark.external
def test_imported_modules_are_found_by_product_and_transport(tmp_path):
    said = import_files(tmp_path / "data", write(tmp_path / "zgrab2.json", records()))
    assert "12 new" in said, said
    with served(tmp_path / "data") as api:
        assert api.facet("tag:zgrab2", "transport") == {"tcp": 11, "udp": 1}
        assert api.search("product:Memcached port:11211")["total"] == 1
        assert api.search("product:MySQL version:8.0.3-rc-log")["total"] == 1
