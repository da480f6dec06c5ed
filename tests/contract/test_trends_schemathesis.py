"""Schemathesis against the trends host's own OpenAPI document (``/trends/openapi.json``): generated
valid and invalid requests with an enterprise key never meet a 5xx, and every response matches
the schema the document declares for its status."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from spyglass.datagen import generate
from tests.conftest import backend_with

EXAMPLES = 25


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("trends-schemathesis"), generate(300, seed=3)) as backend:
        backend.app.state.keys.failed.burst = 1_000_000  # as in test_openapi_schemathesis.py
        yield backend


@pytest.fixture(scope="module")
def trends_schema(served):
    # The document's servers entry is the mount point (/trends): its requests go to the host.
    config = schemathesis.Config.from_dict({"auth": {"openapi": {"key": {"api_key": served.key()}}}})
    return schemathesis.openapi.from_url(f"{served.url}/trends/openapi.json", config=config)


schema = schemathesis.pytest.from_fixture("trends_schema")


# The suite's 120 s is for a hang; one operation's examples on a machine at load 15 take longer, and
# pytest-timeout stopping Hypothesis mid-run was reported as its FlakyStrategyDefinition/FlakyFailure.
@pytest.mark.timeout(900)
@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)
def test_no_server_error_and_every_response_matches_its_schema(case):
    case.call_and_validate(excluded_checks=[positive_data_acceptance])
