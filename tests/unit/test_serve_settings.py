"""serve's settings (SMTP, notifier URLs, scan networks, DNS servers): from the command line, or
from the environment (so the backend the dashboard starts, which inherits it, can be given them);
the command line wins."""

from __future__ import annotations

import pytest

from spyglass.cli import build_parser
from spyglass.cli.commands.serve import settings_from


def settings(*argv: str):
    return settings_from(build_parser().parse_args(["serve", "--data", "/nonexistent", *argv]))


def test_the_defaults_without_environment(monkeypatch):
    for name in ("SPYGLASS_SMTP", "SPYGLASS_NOTIFIER_URLS", "SPYGLASS_SCAN_ALLOW", "SPYGLASS_NAMESERVER"):
        monkeypatch.delenv(name, raising=False)
    s = settings()
    assert s.smtp_server is None and s.notifier_urls == {}
    assert s.scan_allow == ["127.0.0.0/8", "::1/128"]
    assert s.geonet.nameservers is None or s.geonet.nameservers == []


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "198.51.100.7", "example.test"])
def test_listening_beyond_loopback_scans_no_network_by_default(monkeypatch, host):
    """A paying key scanned the server's own loopback services (ClickHouse, PostgreSQL, its mail
    relay) when the backend listened beyond this machine (issue 44, minor 2)."""
    monkeypatch.delenv("SPYGLASS_SCAN_ALLOW", raising=False)
    assert settings("--host", host).scan_allow == []
    assert settings("--host", host, "--scan-allow", "127.0.0.0/8").scan_allow == ["127.0.0.0/8"]
    assert settings("--host", "127.0.0.1").scan_allow == settings("--host", "localhost").scan_allow != []


def test_the_environment_gives_smtp_notifier_urls_and_scan_networks(monkeypatch):
    monkeypatch.setenv("SPYGLASS_SMTP", "127.0.0.1:2525")
    monkeypatch.setenv("SPYGLASS_NOTIFIER_URLS", "slack=http://127.0.0.1:9/hook phone=http://127.0.0.1:9/sms")
    monkeypatch.setenv("SPYGLASS_SCAN_ALLOW", "127.0.0.0/8, 10.1.2.0/24")
    monkeypatch.setenv("SPYGLASS_NAMESERVER", "127.0.0.1:5399")
    s = settings()
    assert s.geonet.nameservers == ["127.0.0.1"] and s.geonet.dns_port == 5399
    assert s.smtp_server == ("127.0.0.1", 2525)
    assert s.notifier_urls == {"slack": "http://127.0.0.1:9/hook", "phone": "http://127.0.0.1:9/sms"}
    assert s.scan_allow == ["127.0.0.0/8", "10.1.2.0/24"]
    # the command line wins
    s = settings("--smtp", "127.0.0.2", "--scan-allow", "::1", "--notifier-url", "slack=http://127.0.0.3/")
    assert s.smtp_server == ("127.0.0.2", 25)
    assert s.scan_allow == ["::1/128"] and s.notifier_urls == {"slack": "http://127.0.0.3/"}


def test_a_bad_value_in_the_environment_is_named(monkeypatch):
    monkeypatch.setenv("SPYGLASS_SCAN_ALLOW", "not-a-network")
    with pytest.raises(ValueError, match="not-a-network"):
        settings()


def test_serve_warns_when_it_listens_beyond_this_machine():
    from spyglass.cli.commands.serve import exposure_warning

    for loopback in ("127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"):
        assert exposure_warning(loopback, None) is None
    warning = exposure_warning("0.0.0.0", None)
    assert warning and "0.0.0.0" in warning and "geonet" in warning and "--rate-limit" in warning
    assert "2 requests a second per key" in (exposure_warning("192.0.2.1", 2.0) or "")


def test_serve_says_why_a_demo_stream_stays_empty():
    from spyglass.present.stream import quiet_stream_hint

    hint = quiet_stream_hint(demo=True, demo_rate=0.0)
    assert hint and "--demo-rate N" in hint and "stream" in hint
    assert quiet_stream_hint(demo=True, demo_rate=2.0) is None and quiet_stream_hint(demo=False, demo_rate=0) is None


def test_the_banner_store_from_the_command_line_or_the_environment(monkeypatch):
    monkeypatch.delenv("SPYGLASS_STORE", raising=False)
    assert settings().store == ""  # the embedded store in the data dir
    monkeypatch.setenv("SPYGLASS_STORE", "clickhouse://127.0.0.1:9000/env")
    assert settings().store == "clickhouse://127.0.0.1:9000/env"
    assert settings("--store", "clickhouse://127.0.0.1:9000/flag").store == "clickhouse://127.0.0.1:9000/flag"


def test_no_bulk_data_leaves_the_files_to_another_backend():
    assert settings().bulk_data is True
    assert settings("--no-bulk-data").bulk_data is False


def test_geonet_measures_internal_networks_only_where_opened(monkeypatch):
    assert settings().geonet.allow == []
    assert settings("--geonet-allow", "10.1.2.3/24").geonet.allow == ["10.1.2.0/24"]
    monkeypatch.setenv("SPYGLASS_GEONET_ALLOW", "127.0.0.0/8, ::1")
    assert settings().geonet.allow == ["127.0.0.0/8", "::1/128"]
    with pytest.raises(ValueError, match="--geonet-allow takes a CIDR"):
        settings("--geonet-allow", "inside")
