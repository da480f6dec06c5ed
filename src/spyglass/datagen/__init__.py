"""Synthetic banner datasets for demos, tests and benchmarks."""

from spyglass.datagen.generator import NETWORK, generate

__all__ = ["NETWORK", "generate", "is_demo_address"]


def is_demo_address(target: str) -> bool:
    """Whether ``target`` lies in the range the synthetic demo hosts are drawn from: nothing is
    there to measure, so neither the dashboard nor the CLI sends packets to it."""
    import ipaddress

    try:
        return ipaddress.ip_address(target) in NETWORK
    except ValueError:
        return False
