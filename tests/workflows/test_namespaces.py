"""The CLI beside a backend that serves the same data dir under another namespace: it attaches
to that backend and speaks its namespace (the lock names it), as users run them, as processes."""

from __future__ import annotations

import pytest

from tests.contract.test_guard import serve
from tests.workflows.commands import spyglass

pytestmark = pytest.mark.external  # spyglass commands as processes


@pytest.mark.parametrize("namespace", ["intel", "shodan"])
def test_the_cli_attaches_to_a_served_data_dir_in_the_backend_s_namespace(tmp_path, namespace):
    with serve(tmp_path, "--namespace", namespace, "--demo"):
        counted = spyglass("--data", str(tmp_path), "count", "port:22")
    assert int(counted.stdout.strip().replace(",", "")) > 0
