"""Trends (enterprise): month-by-month counts of a query over the index's history, as a terminal
chart and the numbers."""

from __future__ import annotations

import re
import shutil
import sys

from spyglass.cli.common import Common, api_command

MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")


def month(text: str) -> str:
    import argparse

    if not MONTH.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not a month (YYYY-MM): {text!r}")
    return text


def chart_width() -> int:
    return max(40, min(120, shutil.get_terminal_size((80, 24)).columns - 1))


def print_chart(months, series, kind: str = "bar") -> None:
    """The chart, coloured on a terminal (plain text when piped), its legend when it has several
    series, then its numbers."""
    from plotext._utility import colorize, uncolorize

    from spyglass.present import trends as t

    colour = sys.stdout.isatty()
    text = t.chart_text(months, series, kind, chart_width(), 14)
    print(text if colour else uncolorize(text))
    if len(series) > 1:
        swatches = [
            colorize(swatch * 2, t.PALETTE[i % len(t.PALETTE)][0]) if colour else swatch * 2
            for i, (_, swatch, _) in enumerate(t.legend(series, kind))
        ]
        print("stacked, bottom to top: " + "  ".join(f"{m} {s.label}" for m, s in zip(swatches, series, strict=True)))
    print()
    for line in t.table_lines(months, series):
        print(line)
    print()


async def trends(clients, args):
    from spyglass.cli.exits import UsageError
    from spyglass.present import trends as t

    problem = t.range_problem(args.start, args.end)
    if problem:
        raise UsageError(f"trends: {problem}")
    result = await clients.trends.search(args.query, args.facets)
    all_months = [m.month for m in result.matches]
    window = t.month_window(all_months, args.start, args.end)
    if args.json:
        # The months asked for, and total as their sum (the whole history without --from/--to).
        return t.within(result, window) if args.start or args.end else result
    months = all_months[window]
    if not months:
        print("no months to show: the index is empty or the range holds none of its months", file=sys.stderr)
        return None
    total = t.Series("matches", [m.count for m in result.matches][window])
    print_chart(months, [total])
    for name in result.facets:
        series = t.facet_series(result, name, args.top, window)
        if series:
            print(f"{t.label(name)}: its top values month by month ({len(series)} charted)")
            print_chart(months, series)
    peak = max(total.counts, default=0)  # a sum would count a service once for each month it was seen in
    print(f"up to {peak:,} services a month over {len(months)} months ({months[0]} to {months[-1]})", file=sys.stderr)
    return None


def register(sub, common: Common) -> None:
    text = "monthly counts of a query over every banner the index has held (enterprise)"
    p = sub.add_parser(
        "trends",
        help=text,
        parents=common.api,
        description=text.capitalize() + ": a chart of the months and their numbers, and per facet "
        "a stacked chart of its top values.",
    )
    p.add_argument("query", help="free text and filter:value terms, e.g. 'product:nginx country:DE'")
    p.add_argument("--facets", help="top values per month, e.g. country:5,port")
    p.add_argument("--from", dest="start", type=month, help="first month shown (YYYY-MM)")
    p.add_argument(
        "--to",
        dest="end",
        type=month,
        help="last month shown (YYYY-MM); --json holds these months only, and total is their sum",
    )
    p.add_argument("--top", type=int, default=5, choices=range(1, 8), metavar="1-7", help="facet values charted")
    p.set_defaults(func=api_command(trends, host="trends"))
