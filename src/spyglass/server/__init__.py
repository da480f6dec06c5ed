"""The embedded backend: serves the intelligence and geonet APIs from a local store.

Nothing here is imported by the client or the TUI, except :mod:`spyglass.server.launcher`.
"""
