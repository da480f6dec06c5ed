"""Saved stream files: daily files by UTC date, appending across restarts, writes after close
ignored (a batch in flight when recording stops)."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime, timedelta

from spyglass.streamfiles import DailyFiles, GzipLines


def test_daily_files_rotate_at_utc_midnight_and_append_after_a_restart(tmp_path):
    before = datetime(2026, 3, 14, 23, 59, 59, tzinfo=UTC)
    files = DailyFiles(tmp_path)
    files.write(b'{"n": 1}', now=before)
    files.write(b'{"n": 2}\n', now=before + timedelta(seconds=2))
    files.close()
    again = DailyFiles(tmp_path)  # the CLI started again the same day
    again.write(b'{"n": 3}', now=before + timedelta(hours=1))
    again.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2026-03-14.json.gz", "2026-03-15.json.gz"]
    assert gzip.open(tmp_path / "2026-03-14.json.gz").read() == b'{"n": 1}\n'
    assert gzip.open(tmp_path / "2026-03-15.json.gz").read() == b'{"n": 2}\n{"n": 3}\n'


def test_a_write_after_close_is_ignored(tmp_path):
    out = GzipLines(tmp_path / "x.json.gz")
    out.write(b"{}")
    out.close()
    out.write(b"{}")
    assert out.lines == 1 and gzip.open(tmp_path / "x.json.gz").read() == b"{}\n"
