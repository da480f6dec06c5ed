"""The optional parts of the backend and the extra that installs each. Only a backend on a shared
banner store or state needs them; a dashboard, the CLI and the embedded backend need neither."""

from __future__ import annotations

from importlib import import_module

from spyglass.server.banners.store import BANNERS, STATE, StoreUnavailable

# extra: (what needs it, the modules it installs, the name a client is told in a 503)
EXTRAS = {
    "clickhouse": ("the ClickHouse banner store", ("clickhouse_driver",), BANNERS),
    "postgres": ("the PostgreSQL state", ("psycopg", "psycopg_pool"), STATE),
}


class ExtraMissing(StoreUnavailable):
    """A part of the backend was asked for whose extra is not installed here."""


def require(extra: str) -> None:
    """Nothing if ``extra``'s modules import; else :class:`ExtraMissing`, one line that names it."""
    what, modules, shown = EXTRAS[extra]
    for module in modules:
        try:
            import_module(module)
        except ImportError as exc:
            why = "is not installed here" if isinstance(exc, ModuleNotFoundError) else f"does not load here ({exc})"
            said = f"{what} needs {module}, which {why}: pip install 'spyglass[{extra}]'"
            raise ExtraMissing(said, what=shown) from None
