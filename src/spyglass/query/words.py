"""What a word of free text (and of a text filter) is: one rule for the embedded index, the ClickHouse
store and the in-memory matcher (the stream filter and alert triggers), so that a query finds the
same banners wherever it runs.

A word is a run of letters and digits (tantivy's default tokenizer splits at every other
character), compared lower-cased. The embedded index keeps no word of ``LONGEST`` UTF-8 bytes or
more (tantivy's ``remove_long``; it measures the word as written, before lower-casing): such a word
cannot be found there, so a term holding one matches nothing in any store or in the matcher, rather
than its other words matching on their own.
"""

from __future__ import annotations

import re

WORD = re.compile(r"[^\W_]+")  # letters and digits (Python's \w without the underscore)
SEPARATOR = r"[^\pL\pN]"  # the same rule as a character class of RE2 (ClickHouse): what splits words
LONGEST = 40  # UTF-8 bytes: a word this long or longer is not in the index


def split(text: str) -> list[str]:
    """Every word of ``text``, lower-cased, long ones too (they still stand between their neighbours)."""
    return [w.lower() for w in WORD.findall(text)]


def indexed(word: str) -> bool:
    """Whether the index holds ``word`` (as written) where a banner has it."""
    return len(word.encode()) < LONGEST


def words(text: str) -> list[str]:
    """The lower-cased words a term matches one after another; none (the term matches nothing) when
    one of them is too long to be indexed."""
    found = WORD.findall(text)
    return [w.lower() for w in found] if all(map(indexed, found)) else []
