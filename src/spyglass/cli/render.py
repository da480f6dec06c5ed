"""How the CLI prints results: every table and summary in one place. The text itself comes from
:mod:`spyglass.present`, shared with the dashboard; every untrusted value goes through
:mod:`spyglass.safetext`."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from spyglass.safetext import clean

# JSON escapes C0 controls itself; DEL, C1 controls (0x9b is an 8-bit CSI) and bidi overrides
# are escaped here too, so untrusted text stays inert in a terminal and the JSON stays exact.
_UNSAFE_IN_JSON = re.compile("[\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def print_json(value: Any) -> None:
    """A command's result as the API's JSON: models anywhere in it (a list of invitations, a dict
    of results) as the body the service would send."""
    print(inert_json(json.dumps(value, indent=2, ensure_ascii=False, default=_as_api)))


def _as_api(value: Any) -> Any:
    if hasattr(value, "to_api"):
        return value.to_api()
    raise TypeError(f"{type(value).__name__} is not JSON")


def inert_json(text: str) -> str:
    """JSON text with the characters a terminal would act on (C1 controls, bidi overrides) escaped."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def print_pairs(pairs: list[tuple[str, Any]]) -> None:
    width = max(len(k) for k, _ in pairs)
    for name, value in pairs:
        print(f"{name:<{width}}  {clean(value, one_line=True)}")


def print_lines(lines: list[str], file=None) -> None:
    for line in lines:
        print(line, file=file or sys.stdout)


def ping_rows(results) -> None:
    from spyglass.present import geonet

    print_lines(geonet.ping_lines(results))


def dns_rows(results) -> None:
    from spyglass.present import geonet

    print_lines(geonet.dns_lines(results))


def missing_rows(results) -> None:
    """The locations that did not answer a geo form, on stderr."""
    from spyglass.present import geonet

    print_lines(geonet.missing_lines(results), file=sys.stderr)


def host_summary(record, history: bool = False) -> None:
    from spyglass.present import host

    print(host.render_host_text(record, history=history))


def search_rows(matches) -> None:
    from spyglass.present import search

    print_lines([search.result_line(b) for b in matches])


def facet_rows(facets) -> None:
    from spyglass.present import search

    print_lines(search.facet_lines(facets))
