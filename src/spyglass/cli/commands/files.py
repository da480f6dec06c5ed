"""Banner files: import (into the embedded backend's data) and generate (a synthetic dataset).

import exits 0 when every line loaded, 1 when some lines were bad (they are listed), 2 when
nothing loaded or a file could not be read to its end.
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
from pathlib import Path

from spyglass.cli.common import Common, open_store, positive
from spyglass.cli.exits import EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE, fail, stop_as_interrupted_on_sigterm

SHOWN = 10  # bad lines listed after an import; the rest are counted


def import_command(args: argparse.Namespace) -> int:
    from spyglass.config import data_dir
    from spyglass.progress import Progress
    from spyglass.server.banners.store import StoreBusy, StoreFull, StoreUnavailable
    from spyglass.server.ingest.importer import ImportReport, import_files
    from spyglass.server.ingest.sources import STDIN, readable, size_of
    from spyglass.server.process import prepare_process

    if folders := [str(p) for p in args.files if p.is_dir()]:
        return fail(f"import: {', '.join(folders)}: a directory; give the files in it (DIR/*)", EXIT_USAGE)
    missing = [str(p) for p in args.files if not readable(p)]
    if missing:
        return fail(f"import: no such file: {', '.join(missing)}", EXIT_USAGE)
    if args.files.count(STDIN) > 1:
        return fail("import: '-' (standard input) can be read once", EXIT_USAGE)
    args.on_interrupt = "what was stored so far is kept; the same command adds the rest"
    stop_as_interrupted_on_sigterm()
    from spyglass.server import geoip

    try:
        geoip.use(args.geoip or list(geoip.configured()))  # (its workers read the databases too)
    except geoip.GeoError as exc:
        return fail(f"import: {exc}", EXIT_USAGE)
    sizes = [size_of(p) for p in args.files]  # None: a pipe, whose share of the whole is not known
    progress = Progress("import")
    totals = ImportReport()
    unreadable: list[str] = []  # a line per file that could not be read to its end
    prepare_process()  # as a backend: tantivy's threads spread over few arenas (server/memory.py)
    # After a kill -9 of this process, multiprocessing's resource tracker (started with this
    # interpreter's -W options) frees its queues' semaphores, and said so as a Python warning with
    # a source path under the user's prompt (newcomer trial 29): the freeing is wanted, the words not.
    if RESOURCE_TRACKER_QUIET not in sys.warnoptions:  # (once: a test runs many imports in one process)
        sys.warnoptions.append(RESOURCE_TRACKER_QUIET)
    index = open_store(args, "import", args.data or data_dir())
    if isinstance(index, int):
        return index
    before = 0  # bytes of the files already imported

    def show(done: int, total: int, r: ImportReport) -> None:
        progress.update(
            None if None in sizes else (before + done) / (sum(sizes) or 1),  # type: ignore[arg-type]
            f"{totals.read + r.read:,} read, {totals.added + r.added:,} new, {totals.bad + r.bad:,} bad",
        )

    try:
        for size, path in zip(sizes, args.files, strict=True):  # a file at a time: what each loaded
            report = import_files(index, [path], progress=show)
            for read in report.files:
                progress.note(file_read(read))
            totals.merge(report)
            unreadable += [
                f"import: {e.path}: {e.message}; {report.added:,} new banners from it were loaded before that"
                for e in report.file_errors
            ]
            before += size or 0
    except StoreBusy as exc:
        return fail(str(exc), EXIT_UNAVAILABLE)
    except StoreUnavailable as exc:  # the ClickHouse server failed or went away part way
        progress.done("stopped")
        return fail(f"import: {exc}; run the same import again to finish it", EXIT_UNAVAILABLE)
    except StoreFull as exc:
        progress.done("stopped")
        return fail(f"import: {exc}; free some space and run the same import again to finish it", EXIT_USAGE)
    finally:
        index.close()
    return summarize(totals, unreadable, progress, as_json=args.json)


def file_read(read) -> str:
    """What one file held: ``scan.xml: nmap, 12 read, 12 new, 0 bad, 3 hosts seen``, how many of its
    banners the store held already, if any (a file imported again: ``12 read, 0 new, 12 already
    there``; "12 banners loaded" said nothing of that), and the hosts a scanner reported (kept with
    what it saw of them besides open ports)."""
    from spyglass.present.values import plural
    from spyglass.safetext import clean

    stopped = " (could not be read to its end)" if read.failed else ""
    there = read.loaded - read.added
    already = f", {there:,} already there" if there else ""
    hosts = f", {plural(read.hosts, 'host')} seen" if read.hosts else ""
    return (
        f"{clean(read.name, one_line=True, max_chars=200)}: {read.format}, {read.read:,} read, "
        f"{read.added:,} new{already}, {read.bad:,} bad{hosts}{stopped}"
    )


def summarize(totals, unreadable: list[str], progress, as_json: bool = False) -> int:
    """The counts and the first bad lines on stderr (with the progress); with ``as_json``, the
    counts as JSON on stdout too, for a script."""
    from spyglass.safetext import clean

    if as_json:
        from spyglass.cli.render import print_json

        print_json(counts(totals, unreadable))

    progress.done(
        f"{totals.read:,} read, {totals.added:,} new, {totals.duplicates:,} already there, {totals.bad:,} bad"
    )
    shown = totals.problems[:SHOWN]
    for problem in shown:
        print(f"  {clean(problem, one_line=True, max_chars=200)}", file=sys.stderr)
    if totals.bad > len(shown):
        print(f"  … and {totals.bad - len(shown):,} more bad {totals.unit}s", file=sys.stderr)
    for line in unreadable:
        fail(line, EXIT_USAGE)
    if totals.empty_scans and totals.hosts:
        print(
            "import: the scan found no open port: no banner to load; the hosts it saw are kept "
            "(spyglass host IP, or search host.state:up)",
            file=sys.stderr,
        )
    elif totals.empty_scans:
        print("import: the scan found no open port: nothing to load", file=sys.stderr)
    elif not unreadable and not totals.loaded and totals.hosts:  # what the scan saw of them is kept
        kept = "the host it saw is kept" if totals.hosts == 1 else f"the {totals.hosts:,} hosts it saw are kept"
        print(f"import: no banner loaded: every {totals.unit} was bad; {kept}", file=sys.stderr)
    elif not unreadable and not totals.loaded:
        why = f"every {totals.unit} was bad" if totals.read else "no banners in the file"
        if totals.read and totals.unit == "line":  # (a JSON array, a pretty-printed banner)
            why += ": a banner file holds one JSON object a line"
        fail(f"import: nothing loaded: {why}", EXIT_USAGE)
    return totals.exit_status


def counts(totals, unreadable: list[str]) -> dict:
    """What ``import --json`` prints: the whole import's counts, each file's, the first bad lines,
    and the files that could not be read to their end."""
    return {
        "read": totals.read,
        "new": totals.added,
        "already_there": totals.duplicates,
        "bad": totals.bad,
        "hosts": totals.hosts,
        "files": [
            {
                "name": read.name,
                "format": read.format,
                "read": read.read,
                "new": read.added,
                "already_there": read.loaded - read.added,
                "bad": read.bad,
                "hosts": read.hosts,
                "complete": not read.failed,
            }
            for read in totals.files
        ],
        "problems": totals.problems,
        "errors": unreadable,
        "exit_status": totals.exit_status,
    }


GENERATE_SUFFIXES = (".json.gz", ".json")
RESOURCE_TRACKER_QUIET = "ignore:resource_tracker:UserWarning"


def generate_command(args: argparse.Namespace) -> int:
    import orjson

    from spyglass.datagen import generate
    from spyglass.export import check_output
    from spyglass.progress import Progress

    problem = check_output(args.output, GENERATE_SUFFIXES)
    if problem:
        return fail(f"generate: {problem}", EXIT_USAGE)
    progress = Progress("generate")
    gz = args.output.name.lower().endswith(".gz")
    try:
        fh = gzip.open(args.output, "wb", compresslevel=3) if gz else open(args.output, "wb")
    except OSError as exc:
        return fail(f"generate: cannot write {args.output}: {exc.strerror or exc}", EXIT_USAGE)
    with fh:
        for n, banner in enumerate(generate(args.count, args.seed), start=1):
            fh.write(orjson.dumps(banner) + b"\n")
            if n % 10_000 == 0:
                progress.update(n / args.count, f"{n:,} banners")
    progress.done(f"{args.count:,} banners to {args.output}")
    return EXIT_OK


def register(sub, common: Common) -> None:
    p = sub.add_parser(
        "import",
        parents=[common.data, common.store],
        help="load banner files (JSON lines) or scanners' output (nmap XML...), plain or .gz",
        description="Load banner files into the embedded backend's data, or the ClickHouse store "
        "--store names (several machines may import into one at once): one JSON banner per line, "
        "or what a scanner wrote (nmap -oX...), known by its content, plain or gzip. Each file's "
        "format and counts are said. FILE '-' reads standard input (masscan -oJ - | spyglass import -); "
        "a pipe such as <(zcat scans.gz) works too. "
        "Bad lines (or records) are listed and skipped. Exit status: 0 every line "
        "loaded, 1 some lines were bad, 2 nothing loaded or a file could not be read "
        "to its end.",
    )
    p.add_argument("files", nargs="+", type=Path, metavar="FILE")
    p.add_argument(
        "--json",
        action="store_true",
        help="also print the counts as JSON on stdout: the whole import's, each file's, the first "
        "bad lines (the progress and messages stay on stderr)",
    )
    p.add_argument(
        "--geoip",
        nargs="+",
        metavar="PATH",
        help="MaxMind-format databases (City or Country, ASN: GeoLite2, DB-IP Lite) giving scanners' "
        "banners their location, ASN and organization (default: $SPYGLASS_GEOIP, paths separated by "
        f"{os.pathsep!r}); without one they have none",
    )
    p.set_defaults(func=import_command)

    p = sub.add_parser(
        "generate",
        help="write a deterministic synthetic banner dataset",
        description="Write a deterministic synthetic banner dataset (addresses in 198.18.0.0/15, "
        "two years of timestamps).",
    )
    p.add_argument("--count", type=positive, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="FILE",
        help="FILE.json.gz or FILE.json; its folder must exist",
    )
    p.set_defaults(func=generate_command)
