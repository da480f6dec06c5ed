"""Location and network owner of imported scans, offline: MaxMind-format databases the test writes
itself (a City and an ASN database covering loopback and the namespaces' network), named with
``--geoip`` or $SPYGLASS_GEOIP; real scanners' files (nmap on loopback, masscan across a veth pair,
committed in tests/formats/data) imported as a user does, then counted, faceted and looked up."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mmdb_writer import MMDBWriter
from netaddr import IPSet

from tests.formats.scans import import_files, served
from tests.workflows.commands import spyglass

pytestmark = pytest.mark.external  # spyglass import and serve as processes

DATA = Path(__file__).parent / "data"
NMAP = DATA / "nmap-loopback.xml"  # 127.0.0.1
MASSCAN = DATA / "masscan-banners.json"  # 10.77.0.2
CITY = {
    "country": {"iso_code": "NL", "names": {"en": "Netherlands", "de": "Niederlande"}},
    "city": {"names": {"en": "Amsterdam"}},
    "subdivisions": [{"iso_code": "NH", "names": {"en": "North Holland"}}],
    "location": {"latitude": 52.3759, "longitude": 4.8975},
}
COUNTRY = {"country": {"iso_code": "DE", "names": {"en": "Germany"}}}  # (a Country database's record)
ASN = {"autonomous_system_number": 64496, "autonomous_system_organization": "Example Networks B.V."}


def _write(path: Path, kind: str, networks: dict[str, dict]) -> Path:
    writer = MMDBWriter(ip_version=6, ipv4_compatible=True, database_type=kind, languages=["en"], description="t")
    for network, record in networks.items():
        writer.insert_network(IPSet([network]), record)
    writer.to_db_file(str(path))
    return path


@pytest.fixture(scope="module")
def databases(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("geoip")
    city = _write(folder / "city.mmdb", "GeoLite2-City", {"127.0.0.0/8": CITY, "10.77.0.0/24": COUNTRY})
    asn = _write(folder / "asn.mmdb", "GeoLite2-ASN", {"127.0.0.0/8": ASN})
    return city, asn


def test_imported_scans_are_located_and_owned_like_collected_ones(databases, tmp_path):
    city, asn = databases
    data = tmp_path / "data"
    spyglass("import", "--data", str(data), str(NMAP), str(MASSCAN), "--geoip", str(city), str(asn))
    with served(data) as api:
        env = {"SPYGLASS_URL": api.url, "SPYGLASS_API_KEY": api.key}
        counted = json.loads(spyglass("count", "tag:nmap,masscan", "--facets", "country,asn", "--json", env=env).stdout)
        facets = {name: {f["value"]: f["count"] for f in values} for name, values in counted["facets"].items()}
        nmap_ports = api.search("tag:nmap")["total"]
        assert facets["country"] == {"NL": nmap_ports, "DE": counted["total"] - nmap_ports}
        assert facets["asn"] == {"AS64496": nmap_ports}  # (the ASN database has no record of 10.77.0.2)
        host = json.loads(spyglass("host", "127.0.0.1", "--json", env=env).stdout)
        assert (host["country_code"], host["country_name"], host["city"]) == ("NL", "Netherlands", "Amsterdam")
        assert (host["latitude"], host["longitude"], host["region_code"]) == (52.3759, 4.8975, "NH")
        owner = ASN["autonomous_system_organization"]
        assert (host["asn"], host["org"], host["isp"]) == ("AS64496", owner, owner)
        [one] = api.search("tag:masscan port:22")["matches"]
        assert one["location"]["country_code"] == "DE" and one["location"]["city"] is None
        assert "asn" not in one and "org" not in one  # no record: nothing said
        assert api.search("country:NL org:example")["total"] == nmap_ports


def test_the_setting_may_come_from_the_environment(databases, tmp_path):
    city, asn = databases
    data = tmp_path / "data"
    spyglass("import", "--data", str(data), str(NMAP), env={"SPYGLASS_GEOIP": os.pathsep.join(map(str, databases))})
    with served(data) as api:
        [banner, *_] = api.search("tag:nmap")["matches"]
        assert banner["location"]["country_code"] == "NL" and banner["asn"] == "AS64496"
    assert city.exists() and asn.exists()


def test_without_a_database_nothing_is_said(tmp_path):
    data = tmp_path / "data"
    import_files(data, NMAP)
    with served(data) as api:
        for banner in api.search("tag:nmap")["matches"]:
            assert not {"location", "asn", "org", "isp"} & set(banner), banner


@pytest.mark.parametrize("command", ["import", "serve"])
def test_a_missing_or_unreadable_database_is_one_line_exit_2(databases, tmp_path, command):
    junk = tmp_path / "junk.mmdb"
    junk.write_bytes(b"not a database\n" * 10)
    missing = tmp_path / "nowhere.mmdb"
    rest = [str(NMAP)] if command == "import" else ["--port", "0"]
    for path, why in ((missing, f"no such file: {missing}"), (junk, f"cannot read {junk}: not a MaxMind database")):
        for given in (["--geoip", str(databases[0]), str(path)], []):
            env = {} if given else {"SPYGLASS_GEOIP": str(path)}
            args = [command, "--data", str(tmp_path / "data"), *rest, *given]
            done = spyglass(*args, env=env, ok=False, timeout=60)
            assert done.returncode == 2, done.stderr
            assert done.stderr == f"spyglass: {command}: geoip: {why}\n"


def test_the_backends_own_scans_of_public_addresses_are_located(monkeypatch, tmp_path):
    """``serve --geoip``: what the crawler knows of an address it scans (a lookup in the test's own
    database, no traffic); a local one stays the "Local network", and what the index knew wins."""
    from spyglass.server.scanner.crawler import about

    public = _write(tmp_path / "city.mmdb", "GeoLite2-City", {"203.0.113.0/24": CITY, "1.1.1.0/24": CITY})
    monkeypatch.setenv("SPYGLASS_GEOIP", str(public))
    found = about("1.1.1.1", None)
    assert found["location"]["country_code"] == "NL" and found["location"]["city"] == "Amsterdam"
    assert about("203.0.113.9", None)["location"]["country_name"] == "Local network"  # (documentation: not public)
    assert about("1.1.1.1", {"location": {"country_code": "SE"}})["location"] == {"country_code": "SE"}
    monkeypatch.delenv("SPYGLASS_GEOIP")
    assert "location" not in about("1.1.1.1", None)
