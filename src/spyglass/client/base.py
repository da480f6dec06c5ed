from __future__ import annotations

from collections.abc import Hashable, Iterable
from functools import cache
from typing import Any, TypeVar, cast
from urllib.parse import quote

from pydantic import TypeAdapter, ValidationError

from spyglass import DEFAULT_NAMESPACE
from spyglass import models as m
from spyglass.client.errors import ResponseFormatError
from spyglass.client.transport import Transport

T = TypeVar("T")


def segment(value: object) -> str:
    """A path segment, escaped so that user input cannot change the path: `.` and `..` too, which
    a URL's rules remove with the segment before them (`scan status ..` asked for /intel)."""
    text = str(value)
    return text.replace(".", "%2E") if text in (".", "..") else quote(text, safe=":,")


def csv(values: str | Iterable) -> str:
    """A comma list, as the API takes several values in one parameter or segment."""
    return values if isinstance(values, str) else ",".join(str(v) for v in values)


@cache
def _adapter(target: Any) -> TypeAdapter:
    return TypeAdapter(target)


class HostClient:
    """Base of the per-host clients: a transport, a namespace, and typed parsing."""

    def __init__(self, transport: Transport, namespace: str = DEFAULT_NAMESPACE) -> None:
        self.transport = transport
        self.namespace = namespace

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.transport!r}, namespace={self.namespace!r})"

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.transport.aclose()

    @property
    def credits(self):
        return self.transport.credits

    def parse(self, target: type[T] | Any, body: Any) -> T:
        try:
            return _adapter(cast(Hashable, target)).validate_python(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            raise ResponseFormatError(
                f"{self.transport.base_url} sent a body that does not match the API ({where}: {first['msg']})"
            ) from None

    async def call(self, target: Any, method: str, path: str, **kwargs: Any) -> Any:
        body = await self.transport.request(method, path, **kwargs)
        return self.parse(target, body)

    async def success(self, method: str, path: str, **kwargs: Any) -> bool:
        """A call answered by ``{success}``."""
        return (await self.call(m.Success, method, path, **kwargs)).success

    def ns(self, path: str) -> str:
        """``path`` under the namespace prefix (``/intel/...`` by default)."""
        return f"/{self.namespace}{path}"
