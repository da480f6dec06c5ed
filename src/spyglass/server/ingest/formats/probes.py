"""Product and version of what a scanner grabbed (masscan's banners, zgrab2's greetings and HTTP
heads), matched with nmap's service probes file where it is installed, as ``nmap -sV`` matches
the same answer.

Only the file's ``match`` lines that name a product (``p/.../``) are used (``softmatch`` lines name
none), those of the grab's service (``imap`` for masscan's ``imap4``); a grab of no known service
(zgrab2's ``banner``) is tried against the lines of nmap's NULL probe, the greetings servers say
unasked. Patterns are compiled at their first use and kept; one written for Perl that Python's
``re`` cannot compile (or reads otherwise: POSIX classes) is skipped. ``$1``, ``$P(1)``,
``$SUBST(1,"_",".")`` and ``$I(1,">")`` in the templates are filled in as nmap fills them. A banner
whose own parsers named a product keeps theirs: this fills only what they left empty.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

FILES = (Path("/usr/share/nmap/nmap-service-probes"), Path("/usr/local/share/nmap/nmap-service-probes"))
_MATCH = re.compile(rb"match ([^\s]+) m(.)(.*?)\2([si]*)(?:\s+(.*))?\Z", re.S)
_FIELD = re.compile(rb"\s*(cpe:|[pvihod])([^\w\s])(.*?)\2a?")
_HELPER = re.compile(r'\$(\d)|\$P\((\d)\)|\$SUBST\((\d),"([^"]*)","([^"]*)"\)|\$I\((\d),"([<>])"\)')
# The scanners' names of a service, where nmap's differ.
SERVICES = {
    "imap4": "imap",
    "postgres": "postgresql",
    "mssql": "ms-sql-s",
    "amqp091": "amqp",
    "rdp": "ms-wbt-server",
    "http.server": "http",
    "title": "http",
    "pop": "pop3",
}
UNKNOWN = frozenset({"", "banner", "unknown"})  # grabs of no named service: tried against the NULL probe's lines
MAX_SUBJECT = 16 << 10  # bytes of a grab matched (nmap reads a service's first answers, a few KiB)
GRAM = 4  # bytes of the index of lines by what they need


@dataclass
class Match:
    line: int  # in the file, for whoever checks a result against it
    service: str
    pattern: bytes
    flags: int
    fields: dict[str, bytes]
    cpes: list[bytes]
    first: int | None = None  # the byte a subject it matches begins with, where the pattern says it
    needs: bytes = b""  # bytes every subject it matches holds
    compiled: re.Pattern[bytes] | None = field(default=None, repr=False)
    failed: bool = False

    def search(self, subject: bytes) -> re.Match[bytes] | None:
        if self.compiled is None and not self.failed:
            self.compiled = _compile(self.pattern, self.flags)
            self.failed = self.compiled is None
        return self.compiled.search(subject) if self.compiled is not None else None  # (nmap's anchor: ^)


def first_byte(pattern: bytes, flags: int) -> int | None:
    """The byte every subject the pattern matches begins with, where it says one (``^SSH-``: "S");
    None where it may begin otherwise. Most of nmap's patterns do, so a grab is tried against the
    lines that may match its first byte only (a thousandth of a NULL probe's 4,000 at best)."""
    if flags & re.I or not pattern.startswith(b"^") or len(pattern) < 2:
        return None
    literal, end = pattern[1], 2
    if literal == 0x5C:  # a backslash: \xHH, or an escaped punctuation character
        escaped = pattern[2:3]
        if escaped == b"x" and re.fullmatch(rb"[0-9a-fA-F]{2}", pattern[3:5]):
            literal, end = int(pattern[3:5], 16), 5
        elif escaped == b"0" and not pattern[3:4].isdigit():
            literal, end = 0, 3
        elif escaped and not escaped.isalnum():
            literal, end = escaped[0], 3
        else:
            return None
    elif bytes([literal]) in b"[(.*+?{|^$)":
        return None
    return None if pattern[end : end + 1] in (b"?", b"*", b"{") else literal


_ESCAPES = {ord("r"): 13, ord("n"): 10, ord("t"): 9}


def required(pattern: bytes, flags: int) -> bytes | None:
    """The longest run of bytes every subject the pattern matches holds as it is (``Server:
    Apache`` of a line matching Apache's head): a substring test (in C) rules out most lines before
    their pattern runs. Read at the top level only (not in groups, classes or alternatives); b"" where
    it cannot say, None where the pattern has alternatives at its top level (it may begin with any)."""
    if flags & re.I or b"(?i" in pattern:
        return b"" if b"|" not in pattern else None
    runs, run, depth, i = [], bytearray(), 0, 0
    while i < len(pattern):
        c, literal = pattern[i], None
        if c == 0x5C:  # a backslash
            escaped = pattern[i + 1 : i + 2]
            if escaped == b"x" and re.fullmatch(rb"[0-9a-fA-F]{2}", pattern[i + 2 : i + 4]):
                literal, i = int(pattern[i + 2 : i + 4], 16), i + 4
            elif escaped and (not escaped.isalnum() or escaped[0] in _ESCAPES):
                literal, i = _ESCAPES.get(escaped[0], escaped[0]), i + 2
            else:  # a class (\d, \w), an anchor, an octal escape or a back reference (its digits too)
                i += 2
                while escaped.isdigit() and pattern[i : i + 1].isdigit():
                    i += 1
        elif c == ord("["):  # a class: to its closing bracket (one first in it is a member)
            j = i + 1 + (pattern[i + 1 : i + 2] == b"^")
            j += pattern[j : j + 1] == b"]"
            while j < len(pattern) and pattern[j] != ord("]"):
                j += 2 if pattern[j] == 0x5C else 1
            i = j + 1
        elif c in b"*?+{":  # a quantifier of the atom before it
            if c == ord("{"):
                close = pattern.find(b"}", i)
                optional, i = pattern[i + 1 : i + 2] == b"0", (close + 1 if close > 0 else len(pattern))
            else:
                optional, i = c != ord("+"), i + 1
            if optional and run:
                run.pop()
            i += pattern[i : i + 1] in (b"?", b"+")  # lazy or possessive
        else:
            depth += (c == ord("(")) - (c == ord(")"))
            if c == ord("|") and depth == 0:
                return None  # alternatives: nothing every match holds, read this way
            literal = c if c not in b"()|.^$" else None
            i += 1
        if literal is not None and depth == 0:
            run.append(literal)
        elif run:  # (a run ends at anything else; after a quantifier it ends too)
            runs.append(bytes(run))
            run = bytearray()
        if c in b"*?+{" and run:
            runs.append(bytes(run))
            run = bytearray()
    runs.append(bytes(run))
    return max(runs, key=len)


def _compile(pattern: bytes, flags: int) -> re.Pattern[bytes] | None:
    if b"[[:" in pattern:  # a POSIX class, which Python reads as a set of characters
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (Python's warnings of sets it may read otherwise later)
            return re.compile(pattern, flags)
    except (re.error, OverflowError, RecursionError, ValueError):
        return None


def parse(text: bytes) -> tuple[dict[str, list[Match]], list[Match]]:
    """The ``match`` lines of a probes file that name a product: by service, and those of the NULL probe."""
    by_service: dict[str, list[Match]] = {}
    null: list[Match] = []
    probe = b""
    for number, line in enumerate(text.split(b"\n"), 1):
        if line.startswith(b"Probe "):
            probe = line.split(b" ", 3)[2] if line.count(b" ") >= 2 else b""
            continue
        found = _MATCH.match(line.rstrip(b"\r")) if line.startswith(b"match ") else None
        if found is None:
            continue
        service, _, pattern, options, rest = found.groups()
        fields: dict[str, bytes] = {}
        cpes: list[bytes] = []
        position = 0
        while (one := _FIELD.match(rest or b"", position)) is not None and one.end() > position:
            name, value = one[1].decode(), one[3]
            if name == "cpe:":
                cpes.append(b"cpe:/" + value)
            else:
                fields.setdefault(name, value)
            position = one.end()
        if "p" not in fields:
            continue
        flags = (re.S if b"s" in options else 0) | (re.I if b"i" in options else 0)
        needs = required(pattern, flags)
        first = first_byte(pattern, flags) if needs is not None else None  # (``^a|b`` may begin with "b")
        needs = needs or b""
        match = Match(number, service.decode("latin-1"), pattern, flags, fields, cpes, first, needs)
        by_service.setdefault(match.service, []).append(match)
        if probe == b"NULL":
            null.append(match)
    return by_service, null


@functools.cache
def _candidates(name: str, first: int) -> tuple[dict[bytes, list[Match]], list[Match]]:
    """The lines to try on a grab of service ``name`` beginning with ``first``: by GRAM bytes of
    what each needs (a grab is tried against the lines whose bytes it holds: a set
    intersection, not a loop over thousands of lines), and those that need fewer."""
    by_service, null = _probes()
    lines = [m for m in (null if name in UNKNOWN else by_service.get(name, [])) if m.first in (None, first)]
    grams = [{m.needs[i : i + GRAM] for i in range(len(m.needs) - GRAM + 1)} for m in lines]
    common = Counter(g for each in grams for g in each)
    by_gram: dict[bytes, list[Match]] = {}
    always: list[Match] = []
    for match, each in zip(lines, grams, strict=True):
        if each:  # indexed by the rarest of its grams: a grab holding it is rarely one it does not match
            by_gram.setdefault(min(each, key=lambda g: (common[g], g)), []).append(match)
        else:
            always.append(match)
    return by_gram, always


@functools.cache
def _probes() -> tuple[dict[str, list[Match]], list[Match]]:
    """The installed probes file, read at its first use (once a process); none: nothing to match."""
    for path in FILES:
        try:
            return parse(path.read_bytes())
        except OSError:
            continue
    return {}, []


def _fill(template: bytes, found: re.Match[bytes]) -> str:
    """A version template with the match's groups in it, as nmap fills ``$1``, ``$P``, ``$SUBST``, ``$I``."""

    def group(n: str) -> bytes:
        index = int(n)
        return (found.group(index) or b"") if index <= (found.re.groups or 0) else b""

    def helper(h: re.Match[str]) -> str:
        plain, printable, subst, old, new, number, order = h.groups()
        if plain:
            return group(plain).decode("latin-1")
        if printable:
            return "".join(c for c in group(printable).decode("latin-1") if c.isprintable() and c.isascii())
        if subst:
            return group(subst).decode("latin-1").replace(old, new)
        return str(int.from_bytes(group(number), "big" if order == ">" else "little"))

    return _HELPER.sub(helper, template.decode("latin-1")).strip()


def identify(service: str, grabbed: str | bytes) -> dict:
    """``product``, ``version``, ``info``, ``cpe``/``cpe23``, ``os`` and ``devicetype`` of a grab
    of ``service`` (a scanner's name of it) as nmap's first matching line says them; {} for none."""
    if not grabbed:
        return {}
    if isinstance(grabbed, str):
        try:
            subject = grabbed.encode("latin-1")  # (a text read as latin-1 is its bytes again)
        except UnicodeEncodeError:
            subject = grabbed.encode("utf-8", "surrogatepass")
    else:
        subject = grabbed
    subject = subject[:MAX_SUBJECT]
    by_gram, always = _candidates(SERVICES.get(service, service), subject[0])
    held = {subject[i : i + GRAM] for i in range(len(subject) - GRAM + 1)} & by_gram.keys()
    tried = sorted([*always, *(m for gram in held for m in by_gram[gram])], key=lambda m: m.line)  # the file's order
    for match in tried:
        found = match.search(subject) if match.needs in subject else None
        if found is not None:
            return _members(match, found)
    return {}


def _members(match: Match, found: re.Match[bytes]) -> dict:
    out: dict = {}
    for key, member in (("p", "product"), ("v", "version"), ("i", "info"), ("o", "os"), ("d", "devicetype")):
        if key in match.fields and (value := _fill(match.fields[key], found)):
            out[member] = value
    cpes = [c for c in (_fill(t, found) for t in match.cpes) if c != "cpe:/"]
    if cpes:
        out["cpe"] = cpes
        out["cpe23"] = [re.sub(r"^cpe:/", "cpe:2.3:", c) for c in cpes]
    return out
