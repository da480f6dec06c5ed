"""What a banner is, the same for every banner store: its shape (the required members), its keys,
the fields filters and facets read (``fields.document``), words and network ranges, the trends
vocabulary, the :class:`~spyglass.server.banners.store.BannerStore` protocol and the importer.

The stores (``index/``, the embedded one, and ``clickhouse/``) import this package; it imports
no store.
"""
