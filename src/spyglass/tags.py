"""The rule for the tags of a saved query, in one place: the server stores tags by it, and the
dashboard's save dialog checks them by it before asking."""

from __future__ import annotations

import re

MAX_TAGS = 10
TAG = re.compile(r"[a-z0-9][a-z0-9._-]{0,31}\Z")


def check_tags(tags: list[str]) -> list[str]:
    """Tags as stored: lower case, unique, each a short word; ValueError says which is wrong."""
    out = list(dict.fromkeys(t.strip().lower() for t in tags if t.strip()))
    for tag in out:
        if not TAG.match(tag):
            raise ValueError(f"tag {tag[:40]!r}: 1-32 letters, digits, '.', '_' or '-'")
    if len(out) > MAX_TAGS:
        raise ValueError(f"at most {MAX_TAGS} tags, not {len(out)}")
    return out
