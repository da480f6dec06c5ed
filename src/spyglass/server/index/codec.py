"""How the record store keeps a banner's bytes: zstd with a dictionary trained on the data dir's own
first banners (kept with them), one small frame per banner, exact to the byte.

Banners repeat themselves (member names, headers, certificate fields), and one banner alone is
too small for a compressor to learn that; a dictionary teaches it once. Level 1: by hand on generated
banners, level 3 kept barely fewer bytes for clearly more time to write and to read (a search page
reads 100, an import writes every one). Real banners compress less than generated ones (see
bench/index.py's line on the shared fixtures).

A stored body is either the JSON itself (it starts with ``{``: what a store held before it had a
dictionary, or from before this layout) or ``\\x00`` and a zstd frame without its magic number.
"""

from __future__ import annotations

import threading

import zstandard

TRAIN_AFTER = 1_000  # banners seen before a dictionary is trained (fewer teach it too little)
TRAIN_ON = 5_000  # at most, banners it is trained on (more: far longer, barely smaller)
DICTIONARY_SIZE = 112 * 1024
LEVEL = 1
FRAME = b"\x00"  # a JSON body never starts with it
MAX_BANNER = 1 << 30  # what a frame may claim to hold, at most


class Codec:
    """Compresses and expands bodies with one dictionary; safe to share between threads."""

    def __init__(self, dictionary: bytes) -> None:
        self.dictionary = zstandard.ZstdCompressionDict(dictionary)
        self._local = threading.local()

    @classmethod
    def train(cls, samples: list[bytes]) -> Codec:
        chosen: list = samples[:TRAIN_ON]  # zstandard's stub wants list[bytes | bytearray | memoryview]
        return cls(zstandard.train_dictionary(DICTIONARY_SIZE, chosen, level=LEVEL).as_bytes())

    def _tools(self) -> tuple[zstandard.ZstdCompressor, zstandard.ZstdDecompressor]:
        tools = getattr(self._local, "tools", None)
        if tools is None:  # zstd contexts are not for two threads at once: one pair per thread
            params = zstandard.ZstdCompressionParameters.from_level(
                LEVEL, format=zstandard.FORMAT_ZSTD1_MAGICLESS, write_checksum=0, write_dict_id=0
            )
            digested = zstandard.ZstdCompressionDict(self.dictionary.as_bytes())
            digested.precompute_compress(compression_params=params)  # else zstd loads it for every banner
            tools = (
                zstandard.ZstdCompressor(dict_data=digested, compression_params=params),
                zstandard.ZstdDecompressor(dict_data=self.dictionary, format=zstandard.FORMAT_ZSTD1_MAGICLESS),
            )
            self._local.tools = tools
        return tools

    def pack(self, body: bytes) -> bytes:
        return FRAME + self._tools()[0].compress(body)

    def pack_all(self, bodies: list[bytes]) -> list[bytes]:
        """:meth:`pack` of each, one after the other: zstd's tables stay in the cache between them,
        where packing each banner as it is read leaves them to be evicted by the rest of its work."""
        compress = self._tools()[0].compress
        return [FRAME + compress(body) for body in bodies]

    def unpack(self, stored: bytes) -> bytes:
        return self._tools()[1].decompress(stored[1:], max_output_size=MAX_BANNER)


def plain(stored: bytes, codec: Codec | None) -> bytes:
    """A stored body's JSON bytes, exactly as the banner came."""
    if stored[:1] != FRAME:
        return stored
    if codec is None:
        raise ValueError("a compressed banner body, but the data dir has no dictionary")
    return codec.unpack(stored)
