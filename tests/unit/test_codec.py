"""Banner bodies compressed with the data dir's own dictionary (server/index/codec.py): exact to the
byte, readable across restarts, and beside the plain bodies of a store from before."""

from __future__ import annotations

import json
import sqlite3

import pytest
import zstandard

from spyglass.datagen import generate
from spyglass.server.index import BannerIndex
from spyglass.server.index.codec import FRAME, TRAIN_AFTER
from spyglass.server.ingest.importer import import_files


def lines(count: int, seed: int = 5) -> list[bytes]:
    out = []
    for i, b in enumerate(generate(count, seed=seed)):
        if i % 97 == 0:
            b["ssl"] = {"cert": {"serial": 2**90 + i}}  # past 64 bits: exact only if kept as bytes
        text = json.dumps(b, ensure_ascii=i % 2 == 0)  # \\u escapes and raw UTF-8 both
        if i % 101 == 0:
            text = text[:-1] + ', "odd": "\\u00e9 \\"}"}'  # escapes kept as they were sent
        out.append(text.encode())
    return out


def stored(data_dir) -> list[bytes]:
    with sqlite3.connect(data_dir / "banners.db") as db:
        return [row[0] for row in db.execute("SELECT body FROM banners ORDER BY seq")]


@pytest.mark.external
def test_bodies_come_back_to_the_byte_after_a_restart(tmp_path):
    source = tmp_path / "in.json"
    sent = lines(TRAIN_AFTER + 500)
    source.write_bytes(b"\n".join(sent) + b"\n")
    index = BannerIndex(tmp_path / "data")
    assert import_files(index, [source], workers=1).added == len(sent)
    index.close()
    raw = stored(tmp_path / "data")
    assert all(body[:1] == FRAME for body in raw)  # the first batch already taught the dictionary
    assert sum(map(len, raw)) * 4 < sum(map(len, sent))
    again = BannerIndex(tmp_path / "data")
    marks = [m for batch in again.added_since(0, 1000) for m, _ in batch]
    back = again.raw_bodies(marks)
    assert [back[m] for m in marks] == sent
    again.close()


def test_a_store_from_before_keeps_its_plain_bodies_readable(tmp_path):
    """Bodies stored before the store had a dictionary stay as they are; later ones are compressed."""
    index = BannerIndex(tmp_path)
    early = [dict(b) for b in generate(10, seed=1)]
    with index.writing() as batch:
        batch.add([index.prepare(b) for b in early])
    later = [dict(b) for b in generate(TRAIN_AFTER, seed=2)]
    with index.writing() as batch:
        batch.add([index.prepare(b) for b in later])
    raw = stored(tmp_path)
    assert all(b[:1] == b"{" for b in raw[:10]) and all(b[:1] == FRAME for b in raw[10:])
    assert index.host(early[0]["ip_str"])[-1] in early and index.total() == len(early) + len(later)
    index.close()


def test_banners_zstd_cannot_learn_from_stay_plain(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise zstandard.ZstdError("cannot train")

    monkeypatch.setattr(zstandard, "train_dictionary", refuse)
    index = BannerIndex(tmp_path)
    banners = [dict(b) for b in generate(TRAIN_AFTER + 10, seed=3)]
    with index.writing() as batch:
        assert len(batch.add([index.prepare(b) for b in banners])) == len(banners)
    assert all(b[:1] == b"{" for b in stored(tmp_path))
    assert index.host(banners[0]["ip_str"])
    index.close()
