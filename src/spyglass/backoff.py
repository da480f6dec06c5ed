"""How long to wait before trying again: one rule for the client's retries, the stream's
reconnections, notifier deliveries and the alert matcher's failed passes."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

DOUBLINGS = 64  # past this many the cap has long been reached (and 2**n no longer fits a float)


@dataclass(frozen=True)
class Backoff:
    """Attempt ``n`` (from 1) waits ``base * 2**(n-1)`` seconds, at most ``cap``, less a random part
    of up to ``jitter`` of it: 1 waits anywhere from 0 ("full jitter"), 0.5 spreads clients that
    retry together yet keeps the growth, 0 is an exact schedule."""

    base: float
    cap: float
    jitter: float = 0.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def ceiling(self, attempt: int) -> float:
        """The wait before attempt ``attempt`` without jitter."""
        return min(self.cap, self.base * 2 ** min(DOUBLINGS, max(0, attempt - 1)))

    def delay(self, attempt: int) -> float:
        ceiling = self.ceiling(attempt)
        return ceiling * self.rng.uniform(1 - self.jitter, 1) if self.jitter else ceiling
