"""The banner index: a durable record store (SQLite) beside a rebuildable search index (tantivy).

Why tantivy: on 1M banners here it counted facets in 1-11 ms and month histograms in 3 ms, where
SQLite took 130-240 ms and 0.9 s and DuckDB had no offline full-text search (DESIGN.md); see
bench/index.py for this implementation's figures.
"""

from spyglass.server.index.store import BannerIndex, StoreBusy

__all__ = ["BannerIndex", "StoreBusy"]
