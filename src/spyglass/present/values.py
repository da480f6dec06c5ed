"""Reading untyped JSON defensively, and turning any JSON value into one inert line."""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import islice
from typing import Any

from rich.cells import cell_len

from spyglass.safetext import clean, to_str

MAX_ITEMS = 50  # of a list or an object shown on one line


def as_dict(obj: Any) -> dict:
    """The raw JSON object of a model (by its wire names) or a dict; anything else is empty."""
    if isinstance(obj, Mapping):
        return dict(obj)
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        value = dump(by_alias=True)
        return value if isinstance(value, dict) else {}
    return {}


def get_path(obj: Any, path: str, default: Any = None) -> Any:
    """``obj["a"]["b"]["c"]`` for ``"a.b.c"`` (a digit indexes a list: ``ssl.chain.0``), or
    ``default`` where a step is missing or of another shape."""
    for part in path.split("."):
        if isinstance(obj, Mapping) and part in obj:
            obj = obj[part]
        elif isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return default
    return default if obj is None else obj


def head(mapping: Mapping, n: int) -> list[tuple[Any, Any]]:
    """The first ``n`` members of an object (a banner may hold a million)."""
    return list(islice(mapping.items(), n))


def empty(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, (list, dict, tuple)) and not value)


def number(value: Any) -> float | None:
    """A finite number from an int, a float or numeric text; None for anything else ("high", true, NaN)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        result = float(value) if abs(value) < 2**1000 else math.inf  # float() overflows past ~1e308
    elif isinstance(value, float):
        result = value
    elif isinstance(value, str):
        try:
            result = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return result if math.isfinite(result) else None


def plain(value: Any) -> str:
    """A scalar as text, before cleaning: true/false as yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return to_str(value)


def text_of(value: Any, max_chars: int = 400) -> str:
    """Any JSON value as one inert line: lists joined by ", ", objects as ``key=value``; "" when empty."""
    if empty(value):
        return ""
    if isinstance(value, Mapping):
        parts = [f"{k}={flat(v)}" for k, v in head(value, MAX_ITEMS) if not empty(v)]
        more = len(value) - MAX_ITEMS
    elif isinstance(value, (list, tuple)):
        parts = [flat(v) for v in value[:MAX_ITEMS] if not empty(v)]
        more = len(value) - MAX_ITEMS
    else:
        return clean(plain(value), one_line=True, max_chars=max_chars)
    text = ", ".join(parts) + (f", … {more:,} more" if more > 0 else "")
    return clean(text, one_line=True, max_chars=max_chars)


def flat(value: Any) -> str:
    """A member inside a list or an object: nested containers as compact JSON-ish text, cut short."""
    if isinstance(value, (Mapping, list, tuple)):
        return "{…}" if isinstance(value, Mapping) else f"[{len(value)} items]"
    return plain(value)[:200]


def first_line(value: Any) -> str:
    """The first non-blank line of a text, without its line ending (no ␍ at the end of a headline)."""
    if not isinstance(value, str):
        return text_of(value)
    for line in value.split("\n", 64)[:64]:
        if line.strip():
            return clean(line.strip(), one_line=True, max_chars=200)
    return ""


def block(value: Any, max_chars: int) -> str:
    """A multi-line text as inert lines: CR LF and trailing blank lines gone, controls visible."""
    if not isinstance(value, str):
        return text_of(value, max_chars=max_chars)
    cut = len(value) - max_chars
    lines = [clean(line.rstrip("\r\t "), max_chars=max_chars) for line in value[:max_chars].split("\n")]
    return "\n".join(lines).strip("\n") + (f"\n… [{cut:,} more characters]" if cut > 0 else "")


def pad(text: str, width: int) -> str:
    """``text`` padded to ``width`` terminal cells (CJK and emoji take two)."""
    return text + " " * max(0, width - cell_len(text))


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 banner``, ``2,000 banners`` (``many`` where adding an s is wrong: address, addresses)."""
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"


def yes_no(flag: object) -> str:
    """A flag as the CLI and the dashboard say it (``-`` when absent; anything else as it came)."""
    return "yes" if flag is True else "no" if flag is False else "-" if flag is None else str(flag)


def moment(stamp: object) -> str:
    """An ISO time as people read it: ``2026-11-30 10:04:05`` (``-`` when absent)."""
    return stamp[:19].replace("T", " ") if isinstance(stamp, str) and stamp else "-"
