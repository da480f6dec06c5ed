"""Which banner store and which state a backend uses: the one place that knows every implementation.

Each store is a package of its own implementing :class:`~spyglass.server.banners.store.BannerStore`
and importing no other store: a new one is a folder beside ``index/`` and ``clickhouse/`` and a
line here. The state (accounts, keys, credits, organizations) likewise: SQLite in the data dir,
or PostgreSQL (server/state/postgres/).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from spyglass.server.banners.store import BANNERS, BannerStore, StoreUnavailable
from spyglass.server.extras import require
from spyglass.server.state.accounts import AccountState, utcnow
from spyglass.server.state.alerts import AlertState
from spyglass.server.state.directory import DirectoryState
from spyglass.server.state.scans import ScanState

ENV_STORE = "SPYGLASS_STORE"  # the store's address when no --store is given
ENV_STATE = "SPYGLASS_STATE"  # the state's address when no --state is given


def open_banner_store(address: str | None, data_dir: Path) -> BannerStore:
    """The banner store at ``address`` (``clickhouse://HOST:PORT/DATABASE[?cluster=NAME&http_port=N]``,
    each parameter optional: inserts go to the HTTP port, 8123 unless named), or the embedded one
    in ``data_dir`` when there is none. ValueError for an address that is not
    one; :class:`StoreUnavailable` when its server cannot be reached or refuses us, or the
    clickhouse extra is not installed."""
    if not address:
        from spyglass.server.index import BannerIndex

        return BannerIndex(data_dir)
    require("clickhouse")
    from spyglass.server.clickhouse import ClickHouseStore, StoreURLError, shown

    try:
        return ClickHouseStore(address)
    except StoreURLError:
        raise
    except Exception as exc:  # the driver's network, server and auth errors
        raise StoreUnavailable(f"cannot use the banner store at {shown(address)}: {exc}", what=BANNERS) from exc


def open_account_state(address: str | None, data_dir: Path, clock: Callable[[], datetime] = utcnow) -> AccountState:
    """The accounts at ``address`` (``postgresql://USER[:PASSWORD]@HOST[:PORT]/DB``), or the
    embedded ones in ``data_dir`` when there is none. ValueError for an address that is not one or
    credentials the server refuses; :class:`StoreUnavailable` when it cannot be reached, or the
    postgres extra is not installed."""
    if not address:
        from spyglass.server.state.sqlite.accounts import Store

        return Store(data_dir, clock)
    require("postgres")
    from spyglass.server.state.postgres import PostgresAccounts

    return PostgresAccounts(address, data_dir, clock)


def open_alert_state(address: str | None, data_dir: Path, clock: Callable[[], datetime] = utcnow) -> AlertState:
    """The alerts, notifiers and delivery queue at ``address`` (the accounts' PostgreSQL, shared by
    every backend on it), or this backend's own in ``data_dir`` when there is none."""
    if not address:
        from spyglass.server.state.sqlite.alerts import AlertStore

        return AlertStore(data_dir, clock=clock)
    require("postgres")
    from spyglass.server.state.postgres.alerts import PostgresAlerts

    return PostgresAlerts(address, clock=clock)


def open_scan_state(address: str | None, data_dir: Path) -> ScanState:
    """The scans at ``address`` (as :func:`open_account_state`), or in ``data_dir``."""
    if not address:
        from spyglass.server.state.sqlite.scans import ScanStore

        return ScanStore(data_dir)
    require("postgres")
    from spyglass.server.state.postgres.scans import PostgresScans

    return PostgresScans(address)


def open_directory_state(address: str | None, data_dir: Path) -> DirectoryState:
    """The saved-query directory at ``address`` (as :func:`open_account_state`), or in ``data_dir``."""
    if not address:
        from spyglass.server.state.sqlite.directory import Directory

        return Directory(data_dir)
    require("postgres")
    from spyglass.server.state.postgres.directory import PostgresDirectory

    return PostgresDirectory(address)
