"""The Range header parser of dataset downloads: what it serves is always inside the file."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spyglass.server.errors import ApiError
from spyglass.server.routers.data import byte_range


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("bytes=0-99", (0, 99)),
        ("bytes=100-", (100, 999)),
        ("bytes=-10", (990, 999)),
        ("bytes=-5000", (0, 999)),  # more than the file: all of it
        ("bytes=900-5000", (900, 999)),  # past the end: cut at the end
        ("bytes=5-1", None),  # malformed: ignored, the whole file
        ("bytes=0-1,5-9", None),  # several ranges: the whole file
        ("items=0-1", None),
        ("bytes=-", None),
        ("bytes=\u0661-", None),  # a digit, but not an ASCII one
    ],
)
def test_known_headers(header, expected):
    assert byte_range(header, 1000) == expected


@pytest.mark.parametrize("header", ["bytes=1000-", "bytes=1000-2000", "bytes=-0"])
def test_unsatisfiable_ranges_are_416_with_the_size(header):
    with pytest.raises(ApiError) as caught:
        byte_range(header, 1000)
    assert caught.value.status == 416 and caught.value.headers == {"Content-Range": "bytes */1000"}


@given(
    size=st.integers(1, 10**12),
    header=st.one_of(
        st.text(max_size=30),
        st.builds(
            lambda a, b: f"bytes={a}-{b}",
            st.one_of(st.just(""), st.integers(0, 10**13).map(str)),
            st.one_of(st.just(""), st.integers(0, 10**13).map(str)),
        ),
    ),
)
def test_any_header_serves_bytes_inside_the_file_or_refuses(size, header):
    try:
        got = byte_range(header, size)
    except ApiError as exc:
        assert exc.status == 416
        return
    if got is not None:
        first, last = got
        assert 0 <= first <= last < size


def test_numbers_of_thousands_of_digits_are_a_range_not_a_crash():
    from spyglass.server.errors import ApiError
    from spyglass.server.routers.data import byte_range

    huge = "9" * 4301
    assert byte_range(f"bytes=-{huge}", 100) == (0, 99)  # the last "N" bytes: the whole file
    assert byte_range(f"bytes=0-{huge}", 100) == (0, 99)
    try:
        byte_range(f"bytes={huge}-", 100)
    except ApiError as exc:
        assert exc.status == 416
    else:
        raise AssertionError("a start past the end is 416")
