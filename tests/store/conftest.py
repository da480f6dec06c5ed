"""The stores the contract runs against: each is a function that opens a store on a folder
(opening it again on the same folder is a restart)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from spyglass.server.bannerstore import BannerStore
from spyglass.server.index import BannerIndex

OpenStore = Callable[[], BannerStore]

STORES: dict[str, Callable[[object], BannerStore]] = {
    "embedded": lambda folder: BannerIndex(folder),  # type: ignore[arg-type]
}


@pytest.fixture(params=sorted(STORES))
def open_store(request, tmp_path) -> OpenStore:
    """Opens the store of this test (the same data every time); closes what it opened."""
    opened: list[BannerStore] = []

    def open_() -> BannerStore:
        store = STORES[request.param](tmp_path)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store) -> BannerStore:
    return open_store()
