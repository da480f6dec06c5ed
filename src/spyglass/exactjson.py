"""JSON read exactly as it was sent, and written exactly: the one decoder and encoder for banner
bytes (stored, replayed, streamed, served).

orjson reads integers past 64 bits as floats, and real banners hold such integers (certificate
serials). msgspec keeps them exact at orjson's speed; the standard library takes what msgspec
refuses but json reads (the escape of a lone surrogate, which wild banners hold), so nothing a
banner carried is changed or lost.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import orjson

_decode = msgspec.json.Decoder().decode


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")  # the standard library would read it as a float


def loads(data: bytes) -> Any:
    """The JSON document in ``data`` (ValueError when it is not JSON: NaN and Infinity neither, as
    nothing that writes banners back out could; or nested past what can be read without exhausting
    the stack)."""
    try:
        return _decode(data)
    except msgspec.DecodeError:
        pass
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    try:
        return json.loads(data, parse_constant=_not_json)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def dumps(value: Any) -> bytes:
    """``value`` as compact JSON: orjson, or the standard library for what orjson refuses (integers
    past 64 bits, lone surrogates), which it writes exactly."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode()
