"""Synthetic banner datasets for demos, tests and benchmarks."""

from spyglass.datagen.generator import NETWORK, generate

__all__ = ["NETWORK", "generate"]
