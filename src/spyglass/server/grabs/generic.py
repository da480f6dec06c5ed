"""Generic: what a port says first (or how it answers an HTTP request), as text, bounded.

A port that accepted a connection and said nothing is still open (as ``nmap -sT`` reports it): its
banner has empty ``data``."""

from __future__ import annotations

from .base import Found


def found(said: bytes) -> Found:
    # backslashreplace keeps the bytes that are not UTF-8 visible and the text valid JSON
    return Found("generic", said.decode("utf-8", "backslashreplace"), {})
