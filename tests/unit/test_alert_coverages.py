"""The /alert streams' coverage of an account's alerts (server/stream/alerts.py): shared, and built
once per change however many streams open at once (attacker trial 4: 250 opens, dropped, queued
1-2 s of building each in the threads every account's requests use)."""

from __future__ import annotations

import asyncio
import ipaddress

from spyglass.netblocks import parse_networks
from spyglass.server.state.sqlite.alerts import AlertStore
from spyglass.server.stream.alerts import AlertCoverages, SharedCoverage
from spyglass.server.stream.hub import Published


class Counted(AlertStore):
    """The SQLite alert state, counting the reads that build a coverage."""

    reads = 0

    def alerts(self, *args, **kwargs):
        self.reads += 1
        return super().alerts(*args, **kwargs)


def banner_at(ip: str) -> Published:
    return Published.of({"ip_str": ip, "port": 80})


async def test_many_streams_opened_at_once_build_one_coverage(tmp_path):
    store = Counted(tmp_path)
    for n in range(200):
        store.create_alert(1, f"a{n}", parse_networks([str(ipaddress.ip_address("10.0.0.0") + n)]), 0)
    coverages = AlertCoverages(store)
    matches = await asyncio.gather(*(coverages.follow(1) for _ in range(50)))
    assert store.reads == 1
    assert len({id(m.shared) for m in matches}) == 1
    assert matches[0](banner_at("10.0.0.7")) and not matches[0](banner_at("10.0.1.7"))
    mine, others = await coverages.follow(1, None), await coverages.follow(2, None)
    assert store.reads == 2 and mine.shared is matches[0].shared and not others(banner_at("10.0.0.7"))
    store.close()


def test_a_long_build_waits_longer_before_the_next(tmp_path):
    """One account's large alerts changed again and again keep at most a fifth of a core building."""
    shared = SharedCoverage(AlertStore(tmp_path), 1, None)
    shared.took, shared.finished = 2.0, 100.0
    assert not shared.due(100.0 + 1.5) and not shared.due(100.0 + 7.9) and shared.due(100.0 + 8.0)
    shared.took = 0.01
    assert shared.due(100.0 + 1.0)  # small alerts: looked at every second, as before
