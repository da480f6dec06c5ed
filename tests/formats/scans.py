"""A scanner's file as a user takes it in: ``spyglass import`` (a process), then the embedded backend
on that data directory answering searches, facets and hosts over HTTP."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from spyglass.server.ingest.formats import Unreadable
from spyglass.server.ingest.formats.known import FORMATS, format_of
from tests.conftest import start_backend
from tests.workflows.commands import spyglass


def read(path: Path) -> tuple[str, list[dict], list[Unreadable]]:
    """(the tool FORMATS says wrote ``path``, its banners, its unreadable records)."""
    data = path.read_bytes()
    fmt = format_of(data[:65536])
    assert fmt is not None, f"no format claims {path.name}: {data[:200]!r}"
    out = list(fmt.records(io.BytesIO(data)))
    return fmt.name, [r for r in out if isinstance(r, dict)], [r for r in out if isinstance(r, Unreadable)]


def claimed_by_one(head: bytes) -> str:
    """The one format that claims ``head`` (none other does)."""
    claims = [f.name for f in FORMATS if f.sniff(head)]
    assert len(claims) == 1, claims
    return claims[0]


def import_files(data: Path, *files: Path, ok: bool = True) -> str:
    """``spyglass import --data DATA FILES...``; what it said on stderr."""
    return spyglass("import", "--data", str(data), *map(str, files), ok=ok).stderr


@dataclass
class Served:
    url: str
    key: str

    def search(self, query: str, facets: str = "") -> dict:
        params = {"key": self.key, "query": query, **({"facets": facets} if facets else {})}
        answer = httpx.get(f"{self.url}/intel/host/search", params=params, timeout=30)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def facet(self, query: str, name: str) -> dict:
        """``{value: count}`` of facet ``name`` over the banners ``query`` finds."""
        return {f["value"]: f["count"] for f in self.search(query, f"{name}:50")["facets"][name]}

    def host(self, ip: str, history: bool = True) -> dict:
        params = {"key": self.key, **({"history": "true"} if history else {})}
        answer = httpx.get(f"{self.url}/intel/host/{ip}", params=params, timeout=30)
        assert answer.status_code == 200, answer.text
        return answer.json()


@contextmanager
def served(data: Path) -> Iterator[Served]:
    """The embedded backend under uvicorn on loopback, on the data directory imported into."""
    server, backend = start_backend(data)
    with server:
        yield Served(backend.url, backend.key())
    backend.store.close()
