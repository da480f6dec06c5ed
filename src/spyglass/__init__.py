"""spyglass: a terminal dashboard for internet intelligence."""

__version__ = "0.1.0"
DEFAULT_NAMESPACE = "intel"
