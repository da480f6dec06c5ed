"""The Host pane on an address that scans saw up with no open service (issue 46): real nmap runs
against loopback (tests/formats/seenfiles.py), what they saw shown in the summary and in full."""

from __future__ import annotations

import io

import pytest

from spyglass.server.banners.seen import rows_of
from spyglass.server.ingest.formats import Seen
from spyglass.server.ingest.formats.nmap import Nmap
from spyglass.tui.app import SpyglassApp
from spyglass.tui.messages import OpenHost
from spyglass.tui.panes.host import HostPane
from tests.conftest import backend_with
from tests.formats.seenfiles import NMAP, runs
from tests.tui.helpers import screen_text, settle

pytestmark = [pytest.mark.skipif(NMAP is None, reason="nmap is not installed"), pytest.mark.external]  # nmap


async def test_a_host_up_with_no_open_port_shows_what_each_run_saw(tmp_path):
    files = runs(tmp_path)
    fmt = Nmap()
    with backend_with(tmp_path / "data", []) as backend:
        for name in ("sweep", "many"):
            for piece in fmt.pieces(io.BytesIO(files[name].read_bytes())):
                for record in fmt.parse(*piece):  # type: ignore[misc]
                    if isinstance(record, Seen):
                        backend.app.state.banners.add_seen(rows_of(record.record, files[name].name))
        app = SpyglassApp(backend.profile(backend.key("member")))
        async with app.run_test(size=(130, 40)) as pilot:
            await settle(pilot)
            app.post_message(OpenHost("127.0.0.1"))
            await settle(pilot)
            assert app.query_one(HostPane).record is not None
            text = screen_text(app)
            assert "Seen by scans: no open service" in text
            assert "scanned" in text and "no open port: seen by nmap" in text  # the summary
            assert "sweep.xml" in text and "many.xml" in text
            assert "40 closed (conn-refused 40: 100-139)" in text
