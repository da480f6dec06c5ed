"""Bulk data (enterprise): data list, data files DATASET, data download DATASET NAME [-o PATH].

A download shows a progress line on stderr, resumes a partial ``PATH.part`` left by an
interrupted one, checks the SHA-1 the listing gives, and prints the file's path on stdout.
"""

from __future__ import annotations

from pathlib import Path

from spyglass.cli.common import Common, api_command


async def list_datasets(clients, args):
    from spyglass.cli.render import print_lines
    from spyglass.present.data import dataset_row, table

    datasets = await clients.data.datasets()
    if args.json:
        return [d.to_api() for d in datasets]
    print_lines(table([dataset_row(d) for d in datasets]))


async def list_files(clients, args):
    from spyglass.cli.render import print_lines
    from spyglass.present.data import file_row, table

    files = await clients.data.files(args.dataset)
    if args.json:
        return [f.to_api() for f in files]
    print_lines(table([file_row(f) for f in files]))


def destination(output: Path | None, name: str) -> Path:
    """``-o`` as given, or NAME inside it when it is a folder, or NAME here. The name comes from
    the server: only its last component is used, so it cannot point elsewhere."""
    safe = Path(name).name or "download"
    if output is None:
        return Path(safe)
    return output / safe if output.is_dir() else output


async def download(clients, args):
    from spyglass.cli.exits import UsageError
    from spyglass.client.data import download_current, part_path
    from spyglass.present.data import progress_text, size_text
    from spyglass.progress import Progress

    dest = destination(args.output, args.name)
    if not dest.parent.is_dir():
        raise UsageError(f"data download: no such folder: {dest.parent}")
    part = part_path(dest)
    resumed = part.stat().st_size if part.exists() else 0
    progress = Progress(f"download {args.name}")

    def show(done: int, total: int | None) -> None:
        progress.update(done / total if total else None, progress_text(done, total))

    chosen = await download_current(clients.data, args.dataset, args.name, dest, progress=show)
    note = f", resumed at {size_text(resumed)}" if resumed else ""
    progress.done(f"{size_text(chosen.size)}, SHA-1 {'checked' if chosen.sha1 else 'not given'}{note}")
    if args.json:
        return {"path": str(dest), "name": chosen.name, "size": chosen.size, "sha1": chosen.sha1}
    print(dest)


def register(sub, common: Common) -> None:
    data = sub.add_parser(
        "data",
        help="bulk data: datasets and their files (enterprise)",
        description="Bulk data (enterprise): the daily and monthly datasets, their files, and downloads.",
    )
    data.set_defaults(func=common.usage(data))
    actions = data.add_subparsers(metavar="ACTION", parser_class=type(data))
    actions.add_parser(
        "list", parents=common.api, help="the datasets", description="The datasets: name, scope, description."
    ).set_defaults(func=api_command(list_datasets))
    p = actions.add_parser(
        "files",
        parents=common.api,
        help="the files of a dataset",
        description="The files of a dataset, newest first: name, size, time (UTC), SHA-1.",
    )
    p.add_argument("dataset", metavar="DATASET")
    p.set_defaults(func=api_command(list_files))
    p = actions.add_parser(
        "download",
        parents=common.api,
        help="download a file (resumes, checks SHA-1)",
        description="Download a file of a dataset. A progress line goes to stderr; an interrupted download "
        "leaves PATH.part, which the next run resumes; the SHA-1 is checked before the file is "
        "renamed to PATH, which is then printed.",
    )
    p.add_argument("dataset", metavar="DATASET")
    p.add_argument("name", metavar="NAME", help="a file name from 'spyglass data files DATASET'")
    p.add_argument("-o", "--output", type=Path, metavar="PATH", help="file or folder to write to (default: NAME here)")
    p.set_defaults(func=api_command(download))
