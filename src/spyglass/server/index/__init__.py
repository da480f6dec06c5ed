"""The banner index: a durable record store (SQLite) beside a rebuildable search index (tantivy).

Why tantivy: on 1M banners it counted facets and month histograms far faster than SQLite, and
DuckDB had no offline full-text search (DESIGN.md has the figures); bench/index.py prints this
implementation's.
"""

from spyglass.server.index.store import BannerIndex, StoreBusy

__all__ = ["BannerIndex", "StoreBusy"]
