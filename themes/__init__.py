"""The themes shipped with spyglass, installed as the package ``spyglass.themes`` (see setup.py)."""
