"""The one backoff rule (spyglass.backoff) that the client, the stream, deliveries and alert
matching wait by."""

from __future__ import annotations

import random

from spyglass.backoff import Backoff
from spyglass.client.stream import RECONNECT
from spyglass.client.transport import RetryPolicy


def test_waits_double_up_to_the_cap_and_jitter_takes_off_at_most_its_share():
    for jitter in (0.0, 0.5, 1.0):
        backoff = Backoff(base=0.5, cap=8.0, jitter=jitter, rng=random.Random(3))
        for attempt in range(1, 12):
            ceiling = min(8.0, 0.5 * 2 ** (attempt - 1))
            delays = [backoff.delay(attempt) for _ in range(50)]
            assert all(ceiling * (1 - jitter) <= d <= ceiling for d in delays)
            assert len(set(delays)) == (1 if jitter == 0 else 50)  # jitter spreads clients that retry together


def test_a_stream_that_stays_down_for_days_keeps_waiting_the_cap():
    """2**n past about 1,024 attempts (8.5 hours of 30 s waits) no longer fits a float: the stream's
    reconnection loop died of an OverflowError there."""
    assert RECONNECT.ceiling(100_000) == RECONNECT.cap
    assert RECONNECT.cap / 2 <= RECONNECT.delay(100_000) <= RECONNECT.cap


def test_the_client_retries_with_full_jitter_and_honours_retry_after():
    policy = RetryPolicy(base=0.5, cap=30.0)
    assert {policy.delay(0, 7.0), policy.delay(3, 500.0)} == {7.0, policy.max_retry_after}
    assert max(policy.delay(2, None) for _ in range(200)) <= 2.0  # the third try: up to 0.5 * 2**2
    assert min(policy.delay(2, None) for _ in range(200)) < 1.0
