"""What a banner is, the same for every banner store: its shape (the required members), its keys,
the fields filters and facets read (``fields.document``), words and network ranges, the rows of
what a run saw (``seen``), the trends vocabulary and the
:class:`~spyglass.server.banners.store.BannerStore` protocol.

The stores (``index/``, the embedded one, and ``clickhouse/``), the importer (``server/ingest/``)
and the scanner import this package; it imports no store, neither the importer nor the scanner.
"""
