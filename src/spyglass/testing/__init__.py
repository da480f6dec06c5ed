"""Real parts on loopback for the tests, the benchmarks (bench/) and scripts/: ClickHouse servers, the
embedded backend in a thread or as `spyglass serve`, a webhook receiver. spyglass itself never
imports this package; it needs nothing that the tests' extra does not install. It is not in the
wheel (setup.py): the tests and the benchmarks use it from an editable install of the source."""


class Unavailable(RuntimeError):
    """Something a helper needs is not installed here (the message says what to install)."""
