"""The synthetic data tells one story: what a host's banners say about who holds it and what it
runs agrees across its banners and with itself (an analyst pivoting on demo data must not find
IIS on Linux, or a Polaris Energy host named under another company's domain)."""

from __future__ import annotations

import itertools
from collections import defaultdict

import pytest

from spyglass.datagen import generate
from spyglass.query.match import VALUES

WINDOWS_ONLY = {"Microsoft IIS httpd", "Remote Desktop Protocol"}
UNIX_ONLY = {"OpenSSH", "Exim smtpd", "Postfix smtpd", "Dovecot imapd", "BusyBox telnetd", "lighttpd"}
TLS_PORTS = {443, 8443, 993}


@pytest.fixture(scope="module")
def banners() -> list[dict]:
    # More banners than the hosts hold in one pass: later passes revisit the same hosts.
    return list(generate(6_000, seed=3))


def windows(os: str | None) -> bool:
    return bool(os and os.startswith("Windows"))


def test_a_host_is_the_same_host_in_every_banner(banners):
    seen: dict[str, tuple] = {}
    for b in banners:
        who = (b["org"], b["isp"], b["asn"], b["os"], b["hostnames"], b["domains"], b["location"]["city"])
        who += (b.get("os_classes"),)  # nmap -O's classes, of the host's OS where it has them
        assert not b.get("os_classes") or b["os"], b["ip_str"]
        assert seen.setdefault(b["ip_str"], who) == who, b["ip_str"]


def test_names_and_networks_belong_to_one_organisation(banners):
    org_of_domain: dict[str, set] = defaultdict(set)
    network_of_org: dict[str, set] = defaultdict(set)
    isp_of_asn: dict[str, set] = defaultdict(set)
    for b in banners:
        assert len(b["domains"]) == 1
        (domain,) = b["domains"]
        org_of_domain[domain].add(b["org"])
        network_of_org[b["org"]].add((b["isp"], b["asn"]))
        isp_of_asn[b["asn"]].add(b["isp"])
        for name in b["hostnames"]:
            assert name.endswith("." + domain), (name, b["org"])
    assert {d: o for d, o in org_of_domain.items() if len(o) > 1} == {}
    assert {o: n for o, n in network_of_org.items() if len(n) > 1} == {}
    assert {a: i for a, i in isp_of_asn.items() if len(i) > 1} == {}


def test_products_agree_with_the_operating_system(banners):
    products_of_host: dict[str, set] = defaultdict(set)
    for b in banners:
        product, os, data = b.get("product"), b["os"], b["data"]
        products_of_host[b["ip_str"]].add(product)
        if product in WINDOWS_ONLY:
            assert os is None or windows(os), (product, os)
        if product in UNIX_ONLY:
            assert not windows(os), (product, os)
        for distro in ("Ubuntu", "Debian"):  # an SSH banner or a default page naming the distribution
            if distro in data or distro in b.get("http", {}).get("title", ""):
                assert os in (distro, None), (distro, os)
        if product == "Redis key-value store":
            assert not windows(os) and ("FreeBSD" in data) == (os == "FreeBSD")
    mixed = {ip for ip, p in products_of_host.items() if p & WINDOWS_ONLY and p & UNIX_ONLY}
    assert mixed == set()


def test_tls_services_carry_tls_and_no_other_does(banners):
    for b in banners:
        ssl = b.get("ssl")
        assert (ssl is not None) == (b["port"] in TLS_PORTS), (b["port"], b["_intel"]["module"])
        if ssl:
            for name in ("ja3s", "jarm"):
                assert isinstance(ssl[name], str) and ssl[name], name
            assert ssl["cert"]["subject"]["CN"] in (*b["hostnames"], b["ip_str"])


def test_no_value_a_pivot_shows_is_empty(banners):
    for b in banners:
        for name, values in VALUES.items():
            if name != "all":
                assert "" not in [v for v in values(b) if isinstance(v, str)], (name, b["port"])


def test_the_same_count_and_seed_give_the_same_banners():
    assert list(generate(300, seed=5)) == list(generate(300, seed=5))


def test_the_demo_collector_rescans_the_demo_hosts():
    from spyglass.server.demostore import DEMO_BANNERS, DEMO_SEED
    from spyglass.server.stream.demo import rescans

    demo = list(generate(DEMO_BANNERS, seed=DEMO_SEED))
    history = {(b["ip_str"], b["port"]): b for b in demo}
    ids = {b["_intel"]["id"] for b in demo}
    for live in itertools.islice(rescans(visit=7), 300):
        old = history[live["ip_str"], live["port"]]  # a service the demo data holds
        for name in ("org", "isp", "os", "hostnames", "product", "version"):
            assert live.get(name) == old.get(name), name
        assert live["_intel"]["id"] not in ids  # a banner of its own
        assert "scan" not in live["_intel"]["options"]  # the demo's on-demand scan is history


def test_the_demo_collector_sees_in_a_month_about_the_services_a_month_of_the_demo_data_did():
    from spyglass.server.demostore import DEMO_BANNERS, DEMO_SEED
    from spyglass.server.stream.demo import rescans

    demo = list(generate(DEMO_BANNERS, seed=DEMO_SEED))
    months: dict[str, set] = {}
    for b in demo:
        months.setdefault(b["timestamp"][:7], set()).add((b["ip_str"], b["port"], b["transport"]))
    monthly = sorted(len(s) for s in months.values())[len(months) // 2]
    collected = {(b["ip_str"], b["port"], b["transport"]) for b in itertools.islice(rescans(visit=3), 5 * monthly)}
    assert 0.75 * monthly <= len(collected) <= 1.25 * monthly  # five passes' worth: every service again
