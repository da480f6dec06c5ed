"""Exporting every result of a query to .json.gz or .json (the importer's format) or CSV, page by
page, resuming where a failed run stopped.

JSON keeps every banner's values exactly as the server sent them. CSV is for spreadsheets: a cell
that could run as a formula gets a leading ``'`` and control characters are shown visibly.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spyglass.present.values import get_path, plural
from spyglass.progress import Progress
from spyglass.safetext import for_csv

if TYPE_CHECKING:
    from spyglass.client import SearchClient

SUFFIXES = (".json.gz", ".json", ".csv")
DEFAULT_CSV_FIELDS = [
    "ip_str",
    "port",
    "transport",
    "timestamp",
    "org",
    "asn",
    "location.country_code",
    "product",
    "version",
]
FIELDS_HELP = (
    "CSV columns, comma-separated, e.g. ip_str,port,org,location.country_code. A column is a banner "
    "member or a dotted path into one (ssl.cert.serial, ssl.chain.0); a single name must be a known "
    "member (ip_str, port, org, ...); a dotted path may start at any module's member (rdp.os). An "
    "object or list is written as its JSON text."
)
# Members real banners carry beyond the Banner model's own (module members are many: those are
# accepted in dotted paths, see check_fields).
EXTRA_MEMBERS = ("ipv6", "mac", "snmp", "ntp", "dns", "cloud", "opts", "vulns", "device", "devicetype", "platform")
_SEGMENT = re.compile(r"[A-Za-z0-9_-]+\Z")
_FIRST = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class BadExport(ValueError):
    """An export that cannot be started as asked; the message says why."""


def check_output(path: Path, suffixes: tuple[str, ...] = SUFFIXES) -> str | None:
    """Why ``path`` cannot be written to, or None."""
    if not path.name.lower().endswith(suffixes):
        return f"{path.name} must end in {', '.join(suffixes[:-1])} or {suffixes[-1]}"
    if path.is_dir():
        return f"{path} is a folder"
    if not path.parent.is_dir():
        return f"no such folder: {path.parent}"
    return None


def known_members() -> set[str]:
    from spyglass.models import Banner

    names = {info.alias or name for name, info in Banner.model_fields.items()}
    return names | set(Banner.model_fields) | set(EXTRA_MEMBERS)


def check_fields(text: str | list[str] | None) -> list[str] | None:
    """The CSV columns asked for, each a valid member path (see FIELDS_HELP), or BadExport."""
    if text is None:
        return None
    fields = [f.strip() for f in text.split(",")] if isinstance(text, str) else list(text)
    known = None
    for name in fields:
        parts = name.split(".")
        if not _FIRST.match(parts[0]) or not all(_SEGMENT.match(p) for p in parts[1:]):
            raise BadExport(f"--fields: {name!r} is not a member name or a dotted path of names")
        if len(parts) == 1 and not name.startswith("_"):
            known = known or known_members()
            if name not in known:
                raise BadExport(f"--fields: a banner has no member {name!r}")
    if len(set(fields)) != len(fields):
        raise BadExport("--fields: a column is named twice")
    return fields


def check_request(path: Path, fields: str | list[str] | None, limit: int | None) -> list[str] | None:
    """Everything about an export that can be wrong before a file is opened or a page is asked for."""
    problem = check_output(path)
    if problem:
        raise BadExport(problem)
    if limit is not None and limit < 1:
        raise BadExport(f"--limit must be at least 1, not {limit}")
    if fields is not None and not path.name.lower().endswith(".csv"):
        raise BadExport("--fields is for .csv; JSON holds whole banners")
    return check_fields(fields)


def cell(banner: Any, path: str) -> str:
    """A CSV cell: text as a spreadsheet cannot run it, controls visible, objects as JSON text."""
    return for_csv(get_path(banner, path))


def banner_line(banner: dict) -> bytes:
    """One banner as a JSON line. orjson refuses integers past 64 bits (certificate serials)."""
    import orjson  # here, not at the top: the CLI's parser reads this module's constants

    try:
        return orjson.dumps(banner) + b"\n"
    except orjson.JSONEncodeError:
        return json.dumps(banner, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class Exporter:
    """Writes pages to ``path``; ``path + '.resume'`` remembers the next page until it finishes."""

    def __init__(self, path: Path, query: str, fields: list[str] | None) -> None:
        self.path = path
        self.query = query
        name = path.name.lower()
        self.gzip = name.endswith(".gz")
        self.fields = (fields or DEFAULT_CSV_FIELDS) if name.endswith(".csv") else None  # None: JSON
        self.state = path.with_name(path.name + ".resume")

    def resume_page(self) -> int:
        """The page to start from: after the last one written, if a run of this query stopped."""
        if self.state.exists() and self.path.exists():
            try:
                saved = json.loads(self.state.read_text())
                if saved.get("query") == self.query and saved.get("fields") == self.fields:
                    return int(saved["next_page"])
            except (ValueError, TypeError, KeyError, AttributeError):
                pass  # a damaged resume note: start again
        for stale in (self.path, self.state):
            stale.unlink(missing_ok=True)
        return 1

    def write_page(self, page: int, matches: list[dict]) -> None:
        if self.fields is not None:
            new = not self.path.exists()
            with open(self.path, "a", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh)
                if new:
                    writer.writerow(self.fields)
                for banner in matches:
                    writer.writerow([cell(banner, f) for f in self.fields])
        else:
            lines = b"".join(banner_line(banner) for banner in matches)
            if self.gzip:
                buffer = io.BytesIO()
                with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz:  # one gzip member a page
                    gz.write(lines)
                lines = buffer.getvalue()
            with open(self.path, "ab") as fh:
                fh.write(lines)
        self.state.write_text(json.dumps({"query": self.query, "fields": self.fields, "next_page": page + 1}))

    def finish(self) -> None:
        self.state.unlink(missing_ok=True)


async def export(
    search: SearchClient, query: str, path: Path, fields: str | list[str] | None = None, limit: int | None = None
) -> int:
    """Write every match of ``query`` (or the first ``limit``); returns how many were written.

    Raises :class:`BadExport` before touching any file if the path, fields or limit are wrong.
    """
    fields = check_request(path, fields, limit)
    exporter = Exporter(path, query, fields)
    page = exporter.resume_page()
    written = (page - 1) * 100
    progress = Progress(f"export {path.name}")
    total = None
    while True:
        result = await search.search(query, page=page, minify=False)
        total = result.total if limit is None else min(result.total, limit)
        matches = [m.to_api() for m in result.matches]
        if limit is not None:
            matches = matches[: max(0, limit - written)]
        if not matches:
            if not written:  # nothing matched: the file it says it wrote exists, empty (CSV: its header)
                exporter.write_page(page, [])
            break
        exporter.write_page(page, matches)
        written += len(matches)
        progress.update(written / total if total else None, f"{written:,} of {total:,} banners")
        if written >= total:
            break
        page += 1
    exporter.finish()
    progress.done(f"{plural(written, 'banner')} to {path}")
    return written
