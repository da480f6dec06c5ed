"""The stream's hot path: lines out of the bytes as they arrive, and each banner as a
:class:`StreamBanner`.

The firehose is thousands of banners a second, and a full JSON decode of a banner costs
more than everything else a reader does to it. So a StreamBanner decodes at once only the members
every banner has (address, port, transport, timestamp: msgspec reads those and skips the rest in
C, checking on the way that the line is one JSON object) and every other member on first use.
Its bytes are kept as they came: saving or forwarding a banner never encodes it again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import msgspec

from spyglass import models as m
from spyglass.client.errors import ResponseFormatError
from spyglass.exactjson import loads


class _Core(msgspec.Struct):
    """The members decoded at once, each as sent (any JSON type); absent ones stay UNSET."""

    ip_str: Any = msgspec.UNSET
    ipv6: Any = msgspec.UNSET
    port: Any = msgspec.UNSET
    transport: Any = msgspec.UNSET
    timestamp: Any = msgspec.UNSET


_CORE = frozenset(_Core.__struct_fields__)
_decode_core = msgspec.json.Decoder(_Core).decode  # integers of any size stay exact


class StreamBanner(Mapping[str, Any]):
    """One banner of the stream: a read-only mapping of its members, as sent.

    ``raw`` is the banner's JSON exactly as it came. The members every banner has are decoded on
    arrival and also read as attributes (``port``, ``transport``, ``timestamp``, ``address``; None
    when absent, and any JSON type when the sender put one there: read them defensively). Any
    other member decodes the whole banner, once. ``model()`` validates it into ``models.Banner``.
    """

    __slots__ = ("raw", "_core", "_members")

    def __init__(self, raw: bytes) -> None:
        try:
            self._core = _decode_core(raw)
        except msgspec.ValidationError as exc:  # (a DecodeError too: first)
            raise ResponseFormatError(f"the stream sent a line that is not a banner object ({exc})") from None
        except msgspec.DecodeError:
            raise ResponseFormatError("the stream sent a line that is not JSON") from None
        self.raw = raw
        self._members: dict[str, Any] | None = None

    @property
    def _all(self) -> dict[str, Any]:
        if self._members is None:
            try:
                self._members = loads(self.raw)
            except ValueError as exc:  # what was skipped is checked only here (a string that is not UTF-8)
                raise ResponseFormatError(f"the stream sent a banner that cannot be decoded ({exc})") from None
        return self._members

    def __getitem__(self, key: str) -> Any:
        if key in _CORE:
            value = getattr(self._core, key)
            if value is msgspec.UNSET:
                raise KeyError(key)
            return value
        return self._all[key]

    def __contains__(self, key: object) -> bool:
        if key in _CORE:
            return getattr(self._core, str(key)) is not msgspec.UNSET
        return key in self._all

    def __iter__(self) -> Iterator[str]:
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)

    def __repr__(self) -> str:
        return f"StreamBanner({self.raw[:100]!r}{'...' if len(self.raw) > 100 else ''})"

    def _member(self, name: str) -> Any:
        value = getattr(self._core, name)
        return None if value is msgspec.UNSET else value

    @property
    def port(self) -> Any:
        return self._member("port")

    @property
    def transport(self) -> Any:
        return self._member("transport")

    @property
    def timestamp(self) -> Any:
        return self._member("timestamp")

    @property
    def address(self) -> str:
        """The address as text (``ip_str``, else ``ipv6``, else the numeric ``ip``), or ''."""
        for value in (self._member("ip_str"), self._member("ipv6")):
            if value and isinstance(value, str):
                return value
        ip = self.get("ip")
        return str(ip) if isinstance(ip, int | str) and not isinstance(ip, bool) else ""

    def model(self) -> m.Banner:
        """The banner validated into the typed model (ResponseFormatError when it does not fit)."""
        try:
            return m.Banner.model_validate(self._all)
        except ValueError as exc:
            raise ResponseFormatError(f"the stream sent a banner that does not match the API ({exc})") from None


class Lines:
    """Complete lines out of chunks cut anywhere (the last, incomplete one waits for the next)."""

    def __init__(self) -> None:
        self.pending: list[bytes] = []  # the start of a line not complete yet

    def feed(self, chunk: bytes) -> list[bytes]:
        if b"\n" not in chunk:
            if chunk:
                self.pending.append(chunk)
            return []
        if self.pending:  # joined once its end arrives: linear in a line of any length
            self.pending.append(chunk)
            chunk = b"".join(self.pending)
            self.pending = []
        lines = chunk.split(b"\n")
        tail = lines.pop()
        if tail:
            self.pending.append(tail)
        return lines


class JsonLines(Lines):
    """``t=json``: one JSON object per line (empty lines are keep-alives)."""

    def feed(self, chunk: bytes) -> list[bytes]:
        return [line for line in super().feed(chunk) if line and not line.isspace()]


class SseParser(Lines):
    """Server-Sent Events: the data of each event (comments, such as keep-alives, are skipped)."""

    def __init__(self) -> None:
        super().__init__()
        self.data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[bytes]:
        out: list[bytes] = []
        for line in super().feed(chunk):
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if self.data:
                    out.append(b"\n".join(self.data))
                    self.data = []
            elif line.startswith(b"data:"):
                value = line[5:]
                self.data.append(value[1:] if value.startswith(b" ") else value)
            # other fields (event:, id:, retry:) and comments (":") carry nothing for us
        return out
