"""The embedded backend: serves the intelligence and geonet APIs from a local store.

Nothing here is imported by the client or the TUI: the dashboard starts it through
:mod:`spyglass.local` (pyproject.toml's import contracts hold both).
"""
