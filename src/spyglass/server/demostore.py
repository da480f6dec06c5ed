"""The demo data, shipped ready to open: the record store and search index that importing
``generate(DEMO_BANNERS, seed=DEMO_SEED)`` builds, packed beside this module (``PACKED``, made by
scripts/make_demo_store.py). A first start unpacks it rather than generating and importing
20,000 banners (most of a first start's time otherwise). Only the embedded store, and only into a
data dir with no banners yet; anything wrong with the archive falls back to importing
(runner.seed_demo_data), and an archive of an older layout is brought up to date as any data dir
is when opened (records migrated, index rebuilt from them).

Importing this module loads no more than the standard library.
"""

from __future__ import annotations

import logging
import lzma
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

log = logging.getLogger("spyglass.demo")

DEMO_BANNERS = 20_000
DEMO_SEED = 1
PACKED = Path(__file__).with_name("demo-store.tar.xz")
RECORDS, INDEX = "banners.db", "index"
_LOCKS = (".tantivy-meta.lock", ".tantivy-writer.lock", ".creating.lock")  # tantivy's and shards.py's; never shipped


def build(data_dir: Path) -> None:
    """Fill the empty store in ``data_dir`` with the demo banners, as a first start without the
    archive does."""
    from spyglass.datagen import generate
    from spyglass.server.index.store import BannerIndex
    from spyglass.server.ingest.importer import import_banners

    store = BannerIndex(data_dir)
    try:
        store.set_meta("demo", "1")
        import_banners(store, generate(DEMO_BANNERS, seed=DEMO_SEED))
    finally:
        store.close()


def pack(data_dir: Path, out: Path = PACKED) -> None:
    """The store in ``data_dir`` (closed, its write-ahead log checkpointed) as an archive."""

    def owned_by_none(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if info.name.rsplit("/", 1)[-1] in _LOCKS:
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        info.mode = 0o700 if info.isdir() else 0o600
        return info

    with lzma.open(out, "wb", preset=9 | lzma.PRESET_EXTREME) as packed, tarfile.open(fileobj=packed, mode="w") as tar:
        tar.add(data_dir / RECORDS, RECORDS, filter=owned_by_none)
        tar.add(data_dir / INDEX, INDEX, filter=owned_by_none)


def unpack(data_dir: Path, packed: Path = PACKED) -> bool:
    """Put the shipped demo store in ``data_dir`` if it holds no banner store yet; whether it did.

    Unpacked aside, then moved in: the records first (a link, which fails where a file is, so of
    two first starts at once only one places them), then the index. A data dir with records and
    no index rebuilds the index from them, so no step leaves it unreadable."""
    records, index = data_dir / RECORDS, data_dir / INDEX
    if records.exists() or (index.exists() and any(index.iterdir())):
        return False
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    aside = Path(tempfile.mkdtemp(prefix=".demo-", dir=data_dir))
    try:
        with tarfile.open(packed, "r:xz") as tar:
            tar.extractall(aside, filter="data")
        if not (aside / RECORDS).is_file() or not (aside / INDEX).is_dir():
            raise ValueError(f"{packed} holds no {RECORDS} and {INDEX}")
        os.link(aside / RECORDS, records)
        try:
            (aside / INDEX).rename(index)  # onto an empty folder too
        except OSError:
            pass  # another start made the index meanwhile: it is rebuilt from the records if need be
        return True
    except FileExistsError:  # another first start placed its records first
        return False
    except (OSError, tarfile.TarError, lzma.LZMAError, EOFError, ValueError) as exc:
        log.warning("the shipped demo data could not be used (%s): generating it", exc)
        return False
    finally:
        shutil.rmtree(aside, ignore_errors=True)
