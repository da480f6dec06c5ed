"""The stream pane over a thin link (issue 45): the dashboard, a real process under a
pseudo-terminal, writes at most 10 times the bytes that ``spyglass stream`` prints for the same
banners, at 2 banners a second with its view full. Repainting the whole view for each new line
cost 30 times at 80x24 and 90 times at 140x42."""

from __future__ import annotations

import pytest

from spyglass.testing.tailbytes import measure


@pytest.mark.external
@pytest.mark.parametrize(("cols", "rows"), [(80, 24), (140, 42)])
def test_the_pane_writes_at_most_ten_times_what_the_cli_prints(tmp_path, cols, rows):
    figures = measure(tmp_path, cols, rows, count=16)
    assert figures.ratio <= 10, figures
