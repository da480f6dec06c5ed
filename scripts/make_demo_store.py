"""Rebuild the demo store shipped in the wheel (src/spyglass/server/demo-store.tar.xz).

Run it after a change to what the demo data is (spyglass.datagen), how a store is laid out (the
records' migrations, the index schema and its SCHEMA_VERSION) or the tantivy version:
tests/unit/test_demostore.py fails until the shipped store matches what this version builds.

    python scripts/make_demo_store.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from spyglass.server.demostore import PACKED, build, pack


def main() -> None:
    with tempfile.TemporaryDirectory() as data:
        build(Path(data))
        pack(Path(data))
    print(f"{PACKED}: {PACKED.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
