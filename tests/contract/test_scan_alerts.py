"""Scans, alerts and notifiers together: a scan finds a service the test started inside an
alert's network; the test's webhook receiver hears of it exactly once."""

from __future__ import annotations

import asyncio
import time

from spyglass.client import Clients
from tests.contract.test_alerts_delivery import Receiver, watch
from tests.contract.test_scans import Greeter, running, wait_done


async def test_a_scan_that_finds_a_new_service_notifies_once(tmp_path):
    with (
        Receiver() as receiver,
        Greeter(["127.0.4.1"], b"220 new service\r\n") as service,
        running(tmp_path, scan_timeout=2.0) as backend,
    ):
        async with Clients.from_profile(backend.profile(backend.key())) as c:
            await watch(c, receiver.url + "/hook", ["127.0.4.0/30"], "new_service")
            first = await c.scans.submit({"127.0.4.0/30": [service.port]})
            await wait_done(c, first.id)
            name = f"127.0.4.1:{service.port}"
            receiver.wait_for(name)
            # scanned again: the same service is not new. A control alert with the "any" trigger
            # then hears of a third scan; deliveries keep their order, so once it has arrived,
            # anything the second scan had queued would have arrived too.
            again = await c.scans.submit({"127.0.4.0/30": [service.port]})
            await wait_done(c, again.id)
            await watch(c, receiver.url + "/control", ["127.0.4.1"], "any")
            control = await c.scans.submit({"127.0.4.1": [service.port]})
            await wait_done(c, control.id)
            deadline = time.monotonic() + 20
            while not any(path == "/control" for path, _, _ in receiver.posts):
                assert time.monotonic() < deadline, "the control notification never came"
                await asyncio.sleep(0.02)
    hooks = [body for path, body, _ in receiver.posts if path == "/hook"]
    assert [b["service"] for b in hooks] == [name]
    assert hooks[0]["triggers"] == ["new_service"] and "new service" in hooks[0]["banner"]["data"]
