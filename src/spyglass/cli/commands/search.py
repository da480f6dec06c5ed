"""The banner index: search, count, host, export."""

from __future__ import annotations

import sys
from pathlib import Path

from spyglass.cli import render
from spyglass.cli.common import Common, api_command, ip_address, positive
from spyglass.present.values import plural


def known_facets(spec: str | None) -> str | None:
    """``spec`` without the facets the index does not know, said in one line on stderr: the search
    runs with the others, as in the dashboard. A malformed count stays in for the server to refuse."""
    from spyglass.query import parse_facets
    from spyglass.safetext import clean

    if not spec:
        return spec
    kept, unknown = [], []
    for item in spec.split(","):
        name = item.partition(":")[0]
        try:
            parse_facets(name)  # a bare name fails only for being unknown
        except ValueError:
            unknown.append(name.strip())
            continue
        kept.append(item)
    if unknown:
        names = clean(", ".join(unknown), one_line=True, max_chars=200)
        print(f"spyglass: facets left out (unknown): {names}", file=sys.stderr)
    return ",".join(kept) or None


async def search(clients, args):
    result = await clients.search.search(args.query, known_facets(args.facets), page=args.page)
    if args.json:
        return result
    render.search_rows(result.matches)
    print(f"{plural(result.total, 'result')} (page {args.page}, {len(result.matches)} shown)", file=sys.stderr)
    render.facet_rows(result.facets)


async def count(clients, args):
    result = await clients.search.count(args.query, known_facets(args.facets))
    if args.json:
        return result
    print(f"{result.total:,}")
    render.facet_rows(result.facets)


async def host(clients, args):
    result = await clients.search.host(args.ip, history=args.history)
    if args.json:
        return result
    render.host_summary(result, history=args.history)


def filters_command(args) -> int:
    """Every filter with the kind of value it takes and an example; then the facet names, and
    which of them cost a query credit."""
    from spyglass.query import FACETS, FILTER_EXAMPLES, FILTERS, IDENTIFYING_FACETS

    if args.json:
        render.print_json(
            {
                "filters": {
                    name: {"kind": kind.value, "example": FILTER_EXAMPLES.get(name)}
                    for name, kind in sorted(FILTERS.items())
                },
                "facets": list(FACETS),
                "paid_facets": sorted(IDENTIFYING_FACETS),
            }
        )
        return 0
    width = max(map(len, FILTERS))
    for name, kind in sorted(FILTERS.items()):
        print(f"{name:<{width}}  {kind.value:<7}  {FILTER_EXAMPLES.get(name, '')}")
    print(f"\nfacets: {', '.join(FACETS)}")
    print(
        f"\nfacets that name hosts or banners cost a query credit, as a search does (also in count and trends): "
        f"{', '.join(sorted(IDENTIFYING_FACETS))}"
    )
    return 0


def export_command(args):
    """Check the output, the fields and the limit before anything is opened or asked for."""
    from spyglass.cli.exits import UsageError
    from spyglass.export import BadExport, check_request

    try:
        args.fields = check_request(args.output, args.fields, args.limit)
    except BadExport as exc:
        raise UsageError(f"export: {exc}") from None
    return api_command(run_export)(args)


async def run_export(clients, args):
    args.on_interrupt = f"{args.output} keeps what was written; the same command resumes the export"
    from spyglass.export import export

    await export(clients.search, args.query, args.output, args.fields, args.limit)


def register(sub, common: Common) -> None:
    from spyglass.export import FIELDS_HELP, SUFFIXES

    for name, handler, text in (
        ("search", search, "search banners (a filter or page > 1 costs a query credit)"),
        ("count", count, "count matches and summarize facets (free; facets such as ip cost a credit)"),
    ):
        p = sub.add_parser(name, help=text, description=text, parents=common.api)
        p.add_argument("query", help="free text and filter:value terms, e.g. 'nginx country:DE -port:22'")
        p.add_argument("--facets", help="e.g. port,org:20,country")
        if name == "search":
            p.add_argument("--page", type=positive, default=1)
        p.set_defaults(func=api_command(handler))

    p = sub.add_parser(
        "filters",
        help="list every search filter with an example, and the facets",
        description="Every filter of the search syntax, the kind of value it takes, and an example "
        "query that finds banners in the demo data; then the facet names.",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=filters_command)

    p = sub.add_parser(
        "host",
        help="everything known about one address",
        parents=common.api,
        description="Everything known about one address: the summary and a line per service.",
    )
    p.add_argument("ip", type=ip_address)
    p.add_argument("--history", action="store_true", help="every banner ever seen, not only the latest")
    p.set_defaults(func=api_command(host))

    p = sub.add_parser(
        "export",
        help="write every result of a query to a file (resumable)",
        parents=[common.profile, common.data],
        description="Write every result of a query to FILE, page by page; run it again after "
        "a failure and it resumes at the page that failed. .json.gz and .json hold "
        "the banners exactly as the server sent them, one per line (what import "
        "reads); .csv holds the --fields columns, with formulas neutralised.",
    )
    p.add_argument("query")
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="FILE",
        help=f"ends in {', '.join(SUFFIXES)}; its folder must exist",
    )
    p.add_argument("--fields", help=FIELDS_HELP)
    p.add_argument("--limit", type=positive, help="stop after this many banners (at least 1)")
    p.set_defaults(func=export_command)
