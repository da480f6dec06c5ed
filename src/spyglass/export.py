"""Exporting every result of a query to .json.gz (the importer's format) or CSV, page by page,
resuming where a failed run stopped."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path
from typing import Any

import orjson

from spyglass.progress import Progress

DEFAULT_CSV_FIELDS = ["ip_str", "port", "transport", "timestamp", "org", "asn", "location.country_code", "product", "version"]


def cell(banner: dict, path: str) -> str:
    value: Any = banner
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


class Exporter:
    """Writes pages to ``path``; ``path + '.resume'`` remembers the next page until it finishes."""

    def __init__(self, path: Path, query: str, fields: list[str] | None) -> None:
        self.path = path
        self.query = query
        self.csv = path.suffix.lower() == ".csv"
        self.fields = fields or (DEFAULT_CSV_FIELDS if self.csv else None)
        self.state = path.with_name(path.name + ".resume")

    def resume_page(self) -> int:
        """The page to start from: after the last one written, if a run of this query stopped."""
        if self.state.exists() and self.path.exists():
            saved = json.loads(self.state.read_text())
            if saved.get("query") == self.query and saved.get("fields") == self.fields:
                return int(saved["next_page"])
        for stale in (self.path, self.state):
            stale.unlink(missing_ok=True)
        return 1

    def write_page(self, page: int, matches: list[dict]) -> None:
        if self.csv:
            new = not self.path.exists()
            with open(self.path, "a", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh)
                if new:
                    writer.writerow(self.fields)
                for banner in matches:
                    writer.writerow([cell(banner, f) for f in self.fields])
        else:
            buffer = io.BytesIO()
            with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz:  # one gzip member a page
                for banner in matches:
                    gz.write(orjson.dumps(banner) + b"\n")
            with open(self.path, "ab") as fh:
                fh.write(buffer.getvalue())
        self.state.write_text(json.dumps({"query": self.query, "fields": self.fields, "next_page": page + 1}))

    def finish(self) -> None:
        self.state.unlink(missing_ok=True)


async def export(intel, query: str, path: Path, fields: list[str] | None = None, limit: int | None = None) -> int:
    """Write every match of ``query`` (or the first ``limit``); returns how many were written."""
    exporter = Exporter(path, query, fields)
    page = exporter.resume_page()
    written = (page - 1) * 100
    progress = Progress(f"export {path.name}")
    total = None
    while True:
        result = await intel.search(query, page=page, minify=False)
        total = result.total if limit is None else min(result.total, limit)
        matches = [m.to_api(intel.namespace) for m in result.matches]
        if limit is not None:
            matches = matches[: max(0, limit - written)]
        if not matches:
            break
        exporter.write_page(page, matches)
        written += len(matches)
        progress.update(written / total if total else None, f"{written:,} of {total:,} banners")
        if written >= total:
            break
        page += 1
    exporter.finish()
    progress.done(f"{written:,} banners to {path}")
    return written
