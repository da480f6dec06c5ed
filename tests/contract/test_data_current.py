"""Downloading a file as it is listed now: a file rebuilt between its listing and its bytes
(the current month's, as banners arrive) is listed again and downloaded once more."""

from __future__ import annotations

import hashlib

import pytest

from spyglass.client import Clients, NotFound
from spyglass.client.data import ChecksumMismatch, download_current, part_path
from spyglass.datagen import generate
from tests.conftest import backend_with
from tests.contract.test_data_api import settle


@pytest.fixture
def served(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("data-current"), generate(200, seed=21)) as backend:
        settle(backend)
        yield backend


def rebuild(backend, name: str) -> None:
    """A banner newly collected in the month of ``name``: the backend builds that file again."""
    banner = dict(next(iter(generate(1, seed=77))))
    banner.pop("ip", None)
    banner |= {"ip_str": "198.18.251.7", "timestamp": name[:7] + "-09T08:00:00.000000"}
    assert backend.collect([banner])
    settle(backend)


async def test_a_file_rebuilt_after_its_listing_is_listed_again_and_downloaded(served, tmp_path):
    async with Clients.from_profile(served.profile(served.key("enterprise"))) as clients:
        name = (await clients.data.files("monthly"))[0].name
        listings = []
        files = clients.data.files

        async def listed_then_rebuilt(dataset: str):
            listing = await files(dataset)
            listings.append(next(f for f in listing if f.name == name))
            if len(listings) == 1:
                rebuild(served, name)  # after the first listing, before its bytes are asked for
            return listing

        clients.data.files = listed_then_rebuilt  # type: ignore[method-assign]
        got = await download_current(clients.data, "monthly", name, tmp_path / name)
        assert len(listings) == 2 and listings[0].sha1 != listings[1].sha1 == got.sha1
        assert hashlib.sha1((tmp_path / name).read_bytes()).hexdigest() == got.sha1


async def test_wrong_bytes_of_an_unchanged_file_are_reported_not_retried(served, tmp_path):
    async with Clients.from_profile(served.profile(served.key("enterprise"))) as clients:
        f = (await clients.data.files("monthly"))[0]
        part_path(tmp_path / f.name).write_bytes(b"x" * (f.size - 1))
        with pytest.raises(ChecksumMismatch, match="SHA-1"):
            await download_current(clients.data, "monthly", f.name, tmp_path / f.name)
        assert not part_path(tmp_path / f.name).exists()
        with pytest.raises(NotFound, match="no file 1999-01.json.gz in dataset monthly"):
            await download_current(clients.data, "monthly", "1999-01.json.gz", tmp_path / "x")
