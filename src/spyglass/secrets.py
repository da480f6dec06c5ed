"""Keeping the API key out of everything a person or a log can see."""

from __future__ import annotations

import re

_KEY_PARAM = re.compile(r"([?&]key=)[^&#\s]*")


def mask_key(key: str | None) -> str:
    """A key as it may be shown: its last four characters at most."""
    if not key:
        return "(none)"
    if len(key) <= 8:
        return "•" * len(key)
    return "•" * 8 + key[-4:]


def redact(text: str, key: str | None = None) -> str:
    """``text`` with every ``key=`` query value and every occurrence of ``key`` masked."""
    text = _KEY_PARAM.sub(r"\1•••", text)
    if key:
        text = text.replace(key, mask_key(key))
    return text
