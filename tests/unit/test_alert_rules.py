"""The alert triggers' rules over banners, the parsers of networks and services, the delivery
backoff, and serve's --notifier-url."""

from __future__ import annotations

import argparse
import ipaddress
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spyglass.backoff import Backoff
from spyglass.netblocks import BadNetwork, network_size, networks_from_text, parse_netblock, parse_networks
from spyglass.server.alerts.delivery import RETRY, message_for
from spyglass.server.alerts.engine import parse_service
from spyglass.server.alerts.triggers import TRIGGERS, UnknownTrigger, matching, parse_names


def banner(port: int = 9999, **extra) -> dict:
    return {"ip_str": "127.0.0.1", "port": port, "transport": "tcp", "timestamp": "2026-11-20T10:00:00", **extra}


@pytest.mark.parametrize(
    ("seen", "new", "fires"),
    [
        (banner(), False, {"any", "uncommon"}),
        (banner(), True, {"any", "uncommon", "new_service"}),
        (banner(443), False, {"any"}),
        (banner(502, tags=["ics"]), False, {"any", "uncommon", "industrial_control_system"}),
        (banner(80, tags=["compromised"]), False, {"any", "malware"}),
        (banner(22, tags=["scanner"]), False, {"any", "internet_scanner"}),
        (banner(443, vulns={"CVE-2014-0160": {"verified": True}}), False, {"any", "vulnerable"}),
        (banner(443, tags="ics"), False, {"any", "industrial_control_system"}),  # read as search reads it
        (banner(443, tags={"ics": 1}), False, {"any"}),  # odd types never match nor break the batch
    ],
)
def test_each_trigger_means_what_its_rule_says(seen, new, fires):
    assert matching([(seen, new)], set(TRIGGERS)) == [fires]


def test_a_batch_matches_each_banner_on_its_own():
    batch = [(banner(80), False), (banner(502, tags=["ics"]), True), (banner(22), False)]
    assert matching(batch, {"industrial_control_system", "new_service"}) == [
        set(),
        {"industrial_control_system", "new_service"},
        set(),
    ]


def test_trigger_names():
    assert parse_names("any, new_service,any") == ["any", "new_service"]
    with pytest.raises(UnknownTrigger, match="Unknown trigger bogus, nope"):
        parse_names("any,bogus,nope")
    with pytest.raises(UnknownTrigger):
        parse_names(" , ")


@given(st.ip_addresses(), st.integers(0, 65535))
def test_a_service_has_one_written_form(address, port):
    written = f"[{address}]:{port}" if address.version == 6 else f"{address}:{port}"
    assert parse_service(written) == f"{address}:{port}"
    assert parse_service(parse_service(written)) == parse_service(written)


@pytest.mark.parametrize("text", ["127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "host:80", ":80", "1.2.3.4:-1"])
def test_not_a_service(text):
    with pytest.raises(ValueError, match="not a service"):
        parse_service(text)


@given(st.lists(st.tuples(st.ip_addresses(v=4), st.integers(24, 32)), min_size=1, max_size=6))
def test_network_size_counts_every_address_once(parts):
    networks = [ipaddress.ip_network((address, bits), strict=False) for address, bits in parts]
    covered = set()
    for n in networks:
        covered.update(range(int(n.network_address), int(n.broadcast_address) + 1))
    blocks = networks_from_text(", ".join(map(str, networks)))
    assert network_size(blocks) == len(covered)
    given = [(n.version, int(n.network_address), n.prefixlen) for n in networks]
    assert [(b.version, b.start, b.prefixlen) for b in blocks] == list(dict.fromkeys(given))  # each once


_DOTTED = st.builds(
    "{}.{}.{}.{}{}".format,
    *[st.sampled_from(["0", "00", "01", "9", "10", "99", "100", "199", "255", "256", "300", "999", "1000"])] * 4,
    st.sampled_from(["", "/", "/0", "/8", "/08", "/24", "/32", "/33", "/255.0.0.0", "/x", " "]),
)


@given(st.one_of(_DOTTED, st.text(max_size=24), st.ip_addresses().map(str)))
def test_a_netblock_reads_as_ipaddress_reads_it(text):
    """The integer fast path takes exactly what ip_network(strict=False) takes, as the same network,
    and writes it as alerts always kept it (a single address without its prefix length)."""
    try:
        network = ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        with pytest.raises(ValueError):
            parse_netblock(text)
        return
    block = parse_netblock(text)
    assert (block.version, block.start, block.prefixlen) == (
        network.version,
        int(network.network_address),
        network.prefixlen,
    )
    assert str(block) == (str(network.network_address) if network.num_addresses == 1 else str(network))
    assert network.network_address in block and network.broadcast_address in block
    assert (
        (network.broadcast_address + 1 in block) is False
        if int(network.broadcast_address) < (1 << network.max_prefixlen) - 1
        else True
    )


@pytest.mark.parametrize("value", [[], "", ["10.0.0.300"], ["10.0.0.0/33"], [7], None, {"ip": "x"}])
def test_bad_networks_are_named(value):
    with pytest.raises(BadNetwork, match="filters.ip"):
        parse_networks(value)


def test_backoff_doubles_up_to_a_ceiling():
    waits = [RETRY.delay(n) for n in range(1, 20)]
    assert waits[1] == 2 * waits[0] and waits == sorted(waits) and waits[-1] == RETRY.cap


def test_the_message_names_the_service_and_stays_inert():
    msg = message_for(
        {
            "event": "E1",
            "alert": {"id": "A1", "name": "lab\x1b[31m"},
            "triggers": ["new_service"],
            "service": "127.0.0.1:80",
            "transport": "tcp",
            "banner": {"product": "nginx\x1b]0;pwned\x07"},
        }
    )
    assert msg.event == "E1" and "new_service on 127.0.0.1:80" in msg.subject
    assert "\x1b" not in msg.subject + msg.text and "Product: nginx" in msg.text


def test_serve_takes_notifier_urls():
    from spyglass.cli.commands.serve import parse_notifier_urls

    assert parse_notifier_urls(["slack=http://127.0.0.1:9", "phone=https://sms.example/send"]) == {
        "slack": "http://127.0.0.1:9",
        "phone": "https://sms.example/send",
    }
    for bad in ("pigeon=http://x", "slack", "slack=ftp://x"):
        with pytest.raises(ValueError, match="--notifier-url takes PROVIDER=URL"):
            parse_notifier_urls([bad])
    assert argparse  # the flag itself is exercised by test_cli_help's walk


def test_the_engine_queues_one_event_per_banner_and_alert(tmp_path):
    from spyglass.server.alerts.delivery import DeliveryWorker
    from spyglass.server.alerts.engine import AlertEngine
    from spyglass.server.collect import Collected
    from spyglass.server.state.sqlite.alerts import AlertStore

    store = AlertStore(tmp_path)
    alert = store.create_alert(1, "v6", parse_networks(["::1", "127.0.0.0/30"]), 0)
    store.set_triggers(alert.id, ["new_service", "any"], True)
    store.set_ignored(alert.id, "new_service", parse_service("[::1]:80"), True)
    store.set_ignored(alert.id, "any", parse_service("[::1]:80"), True)
    hook = store.create_notifier(1, "webhook", None, {"url": "http://127.0.0.1:9/"})
    store.set_attached(alert.id, hook, True)
    engine = AlertEngine(store, DeliveryWorker(store))
    written_long = {"ip_str": "0:0:0:0:0:0:0:1", "port": 80, "transport": "tcp", "timestamp": "2026-11-20T10:00:00"}
    batch = [
        Collected(written_long, True, "test"),  # ignored for both triggers, however the address is written
        Collected(banner(22), True, "test"),  # any and new_service: one event
        Collected({**banner(22), "ip_str": "127.0.0.9"}, True, "test"),  # outside the networks
    ]
    assert engine.process(batch) == 1
    assert engine.process(batch) == 0  # the same banners again: the same events, not queued twice
    (queued,) = store.due(now=float("inf"))
    assert queued.payload["service"] == "127.0.0.1:22" and queued.payload["triggers"] == ["any", "new_service"]
    store.close()


def test_the_engine_holds_what_alerts_watch_until_its_notifications_are_queued(tmp_path, monkeypatch, caplog):
    from spyglass.server.alerts import engine as engine_module
    from spyglass.server.alerts.delivery import DeliveryWorker
    from spyglass.server.alerts.engine import AlertEngine
    from spyglass.server.collect import Collected
    from spyglass.server.state.sqlite.alerts import AlertStore

    failing = [True]
    real = engine_module.matching

    def matching(*args):
        if failing[0]:
            raise RuntimeError("the trigger matcher failed")
        return real(*args)

    monkeypatch.setattr(engine_module, "matching", matching)
    monkeypatch.setattr(engine_module, "MATCH_RETRY", Backoff(base=300.0, cap=600.0))  # never due by itself here
    store = AlertStore(tmp_path)
    alert = store.create_alert(1, "net", parse_networks(["127.0.0.0/30"]), 0)
    store.set_triggers(alert.id, ["any"], True)
    store.set_attached(alert.id, store.create_notifier(1, "webhook", None, {"url": "http://127.0.0.1:9/"}), True)
    engine = AlertEngine(store, DeliveryWorker(store))
    inside, outside = banner(22), {**banner(22), "ip_str": "127.0.0.9"}

    added, wait = engine.run_pass([[Collected(inside, True, "scan"), Collected(outside, True, "scan")]])
    assert added == 0 and wait is not None and 0 < wait <= 300  # tried again in five minutes
    (held,) = store.held(now=float("inf"))
    assert (held.batch, held.attempts) == ([(inside, True, "scan")], 1)  # only what an alert watches
    failing[0] = False
    added, later = engine.run_pass([])
    assert added == 0 and later is not None and later <= wait  # not due yet: left held
    store.held_due(time.time())  # as a start does
    assert engine.run_pass([]) == (1, None)  # matched, queued, and let go
    assert store.held(now=float("inf")) == [] and len(store.due(now=float("inf"))) == 1

    failing[0] = True
    monkeypatch.setattr(engine_module, "HOLD_FOR", 0.0)
    assert engine.run_pass([[Collected(banner(23), True, "scan")]]) == (0, None)  # failing too long: given up
    assert store.held(now=float("inf")) == [] and "failed for 0 s: given up" in caplog.text
    store.close()


def _networks(version: int):
    """Small networks in three 4,096-address stretches (the first, one inside, the last of the
    version's space): they overlap, nest and touch often."""
    bits = 32 if version == 4 else 128
    bases = (0, 10 << (bits - 8), 2**bits - 4096)
    return st.builds(
        lambda base, offset, prefix: ipaddress.ip_network((base + offset, prefix), strict=False),
        st.sampled_from(bases),
        st.integers(0, 4095),
        st.integers(bits - 12, bits),
    )


_ALERTS = st.lists(st.lists(_networks(4) | _networks(6), max_size=30), max_size=6)


@given(_ALERTS, st.data())
def test_coverage_finds_exactly_the_alerts_with_an_address_in_one_of_their_networks(alerts, data):
    from spyglass.coverage import Coverage, spans_of

    coverage = Coverage(enumerate([spans_of(parse_netblock(str(n)) for n in nets) for nets in alerts]))
    edges = []  # each network's first and last address, and their neighbours outside it
    for n in (n for nets in alerts for n in nets):
        first, last = int(n.network_address), int(n.broadcast_address)
        edges += [type(n.network_address)(i) for i in (first - 1, first, last, last + 1) if 0 <= i < 2**n.max_prefixlen]
    addresses = data.draw(st.lists(st.sampled_from(edges), max_size=40)) if edges else []
    addresses += data.draw(st.lists(st.ip_addresses(), max_size=10))
    for address in addresses:
        assert coverage.covering(address) == [i for i, nets in enumerate(alerts) if any(address in n for n in nets)]


@given(st.lists(_networks(4) | _networks(6), max_size=30), st.data())
def test_packed_ranges_are_the_networks_ranges(nets, data):
    """The ranges kept beside an alert's networks unpack to what the networks make, and an address
    is covered by them exactly when it is in one of the networks."""
    from spyglass.coverage import covers, pack_spans, spans_of, unpack_spans

    spans = spans_of(parse_netblock(str(n)) for n in nets)
    assert unpack_spans(pack_spans(spans)) == spans
    bounds = [(n, i) for n in nets for i in (int(n.network_address) - 1, int(n.broadcast_address) + 1)]
    edges = [type(n.network_address)(i) for n, i in bounds if 0 <= i < 2**n.max_prefixlen]
    for address in data.draw(st.lists(st.sampled_from(edges), max_size=20)) if edges else []:
        assert covers(spans, address) == any(address in n for n in nets)
    with pytest.raises(ValueError):
        unpack_spans(pack_spans(spans) + b"x")


def test_alerts_written_before_their_ranges_were_kept_get_them_on_opening(tmp_path):
    import sqlite3

    from spyglass.coverage import spans_of, unpack_spans
    from spyglass.server.state.sqlite.alerts import MIGRATIONS, AlertStore

    store = AlertStore(tmp_path)
    networks = parse_networks(["10.0.0.0/24", "10.0.1.0/24", "2001:db8::/120"])
    alert = store.create_alert(1, "old", networks, 0)
    store.close()
    with sqlite3.connect(tmp_path / "alerts.db") as db:  # as the release before them left it
        db.execute("ALTER TABLE alerts DROP COLUMN spans")
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) - 1}")
    store = AlertStore(tmp_path)
    kept = store.alert(1, alert.id)
    assert kept is not None and kept.spans is not None and unpack_spans(kept.spans) == spans_of(networks)
    store.close()


def test_the_engine_reads_the_alerts_again_only_when_they_changed(tmp_path, monkeypatch):
    """Issue 34: each batch read and parsed every network of every alert (100,000 networks made
    another account's delivery take 10 s)."""
    import sqlite3

    from spyglass.server.alerts.delivery import DeliveryWorker
    from spyglass.server.alerts.engine import AlertEngine
    from spyglass.server.collect import Collected
    from spyglass.server.state.sqlite.alerts import AlertStore

    store = AlertStore(tmp_path)
    alert = store.create_alert(1, "net", parse_networks(["127.0.0.0/30"]), 0)
    store.set_attached(alert.id, store.create_notifier(1, "webhook", None, {"url": "http://127.0.0.1:9/"}), True)
    reads = []
    real = store.alerts
    monkeypatch.setattr(store, "alerts", lambda *a, **k: reads.append(a) or real(*a, **k))
    engine = AlertEngine(store, DeliveryWorker(store))
    batch = [Collected(banner(port), True, "scan") for port in (22, 23)]
    assert engine.process(batch[:1]) == 0 and engine.process(batch[:1]) == 0  # no trigger yet
    assert len(reads) == 1
    store.set_triggers(alert.id, ["any"], True)  # a change here
    assert engine.process(batch[:1]) == 1 and len(reads) == 2
    with sqlite3.connect(tmp_path / "alerts.db") as other:  # a change by another connection
        other.execute("DELETE FROM alert_triggers")
    assert engine.process(batch[1:]) == 0 and len(reads) == 3
    assert engine.process(batch[1:]) == 0 and len(reads) == 3
    store.close()


def test_an_edit_parses_no_network_in_the_engine(tmp_path, monkeypatch):
    """Issue 44, minor 6: each edit of an alert of 120,000 networks had the engine parse all of
    them again, ahead of every other account's banners (0.4 s became 1.4-2.7 s). Their ranges are
    kept beside them: the engine unpacks them, once for each change of them."""
    from spyglass.server.alerts.delivery import DeliveryWorker
    from spyglass.server.alerts.engine import AlertEngine
    from spyglass.server.collect import Collected
    from spyglass.server.state.sqlite.alerts import AlertStore

    store = AlertStore(tmp_path)
    networks = parse_networks([f"10.0.{n >> 8}.{n & 255}" for n in range(1000)])
    alert = store.create_alert(1, "big", networks, 0)
    store.set_triggers(alert.id, ["any"], True)
    store.set_attached(alert.id, store.create_notifier(1, "webhook", None, {"url": "http://127.0.0.1:9/"}), True)
    engine = AlertEngine(store, DeliveryWorker(store))
    batch = [Collected(banner(22, ip_str="10.9.9.9"), True, "scan")]
    assert engine.process(batch) == 0
    from spyglass.server.state import alertrows as rows

    parsed, unpacked, real, real_unpack = [], [], rows.parse_netblock, rows.unpack_spans
    monkeypatch.setattr(rows, "parse_netblock", lambda text: parsed.append(text) or real(text))
    monkeypatch.setattr(rows, "unpack_spans", lambda packed: unpacked.append(1) or real_unpack(packed))
    store.set_networks(1, alert.id, [*networks[1:], real("10.9.9.9")])
    assert engine.process(batch) == 1 and parsed == [] and len(unpacked) == 1
    store.set_triggers(alert.id, ["new_service"], True)  # the alerts changed, its networks did not: kept
    assert engine.process([Collected(banner(23, ip_str="10.9.9.9"), True, "scan")]) == 1
    assert parsed == [] and len(unpacked) == 1
    store.close()


def test_an_alert_from_before_its_ranges_were_kept_is_matched(tmp_path):
    """A row written before ranges were kept beside the networks (its ``spans`` empty) is matched
    from its networks, parsed."""
    from spyglass.server.alerts.delivery import DeliveryWorker
    from spyglass.server.alerts.engine import AlertEngine
    from spyglass.server.collect import Collected
    from spyglass.server.state.sqlite.alerts import AlertStore

    store = AlertStore(tmp_path)
    alert = store.create_alert(1, "old", parse_networks(["10.9.9.0/24"]), 0)
    store.set_triggers(alert.id, ["any"], True)
    store.set_attached(alert.id, store.create_notifier(1, "webhook", None, {"url": "http://127.0.0.1:9/"}), True)
    store._db.run("UPDATE alerts SET spans = NULL")
    engine = AlertEngine(store, DeliveryWorker(store))
    assert engine.process([Collected(banner(22, ip_str="10.9.9.9"), True, "scan")]) == 1
    assert engine.process([Collected(banner(22, ip_str="10.9.10.9"), True, "scan")]) == 0
    store.close()


async def test_deliveries_share_one_tls_context(monkeypatch):
    """Each delivery's client made its own TLS context, loading the CA bundle: about 0.1 s of the
    event loop a delivery (138 ms on a loaded machine), ahead of every other request."""
    import ssl

    from spyglass.netools.networks import Reach
    from spyglass.server.alerts.delivery import message_for
    from spyglass.server.alerts.destinations import Destinations
    from spyglass.server.alerts.providers import deliver
    from spyglass.server.outbound import tls
    from spyglass.testing.alerts import Receiver

    made, real = [], ssl.create_default_context
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: made.append(1) or real(*a, **k))
    tls.cache_clear()
    destinations = Destinations(Reach(["127.0.0.0/8"]))
    with Receiver() as receiver:
        for n in range(3):
            msg = message_for({"event": f"E{n}", "alert": {"id": "A", "name": "lab"}, "service": "127.0.0.1:22"})
            assert await deliver("webhook", {"url": f"{receiver.url}/hook"}, msg, {}, None, destinations) == "HTTP 200"
    assert len(made) <= 1
