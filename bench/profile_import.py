"""Where an import's processes spend their wall time: ``spyglass import`` with each process profiled.

    python bench/profile_import.py DATA FILE [--top 30]

Runs spyglass's own ``import`` of FILE into DATA in this process, under cProfile (wall time), and
each of its workers too: a worker is spawned, so it runs this file as ``__mp_main__`` and profiles
itself from then until it exits. Prints the importing process's and the workers' (summed) seconds
in the functions where they are spent, cumulative: waits for a lock or a queue show as such. The
profiler slows Python code (not SQLite's, zstd's or tantivy's), and sees only each process's main
thread (not the thread that feeds tantivy): read it for where the time waits, not for rates.
"""

from __future__ import annotations

import argparse
import atexit
import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

FOLDER = "SPYGLASS_PROFILE_IMPORT"  # where each process leaves its profile


def _profile_until_exit(kind: str) -> None:
    profile = cProfile.Profile()
    began = time.perf_counter()
    profile.enable()

    def dump() -> None:
        profile.disable()
        profile.dump_stats(f"{os.environ[FOLDER]}/{kind}-{os.getpid()}-{time.perf_counter() - began:.3f}.prof")

    atexit.register(dump)


if __name__ == "__mp_main__" and os.environ.get(FOLDER):  # a worker, spawned
    _profile_until_exit("worker")


def report(folder: Path, kind: str, top: int) -> None:
    files = sorted(folder.glob(f"{kind}-*.prof"))
    if not files:
        return
    lives = [float(f.stem.rsplit("-", 1)[1]) for f in files]
    stats = pstats.Stats(*[str(f) for f in files], stream=sys.stdout)
    print(
        f"\n{kind}: {len(files)} process(es), profiled {sum(lives):.1f} s in all "
        f"({min(lives):.1f}-{max(lives):.1f} s each); cumulative seconds, summed:"
    )
    rows = []
    for (path, line, name), (_, calls, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{Path(path).parent.name}/{Path(path).name}:{line}" if line else path
        rows.append((cumulative, calls, f"{name} ({where})"))
    for cumulative, calls, name in sorted(rows, reverse=True)[:top]:
        print(f"  {cumulative:8.2f} s  {calls:9,}  {name}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path)
    parser.add_argument("file", type=Path)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    from spyglass.cli import main as spyglass

    folder = Path(tempfile.mkdtemp(prefix="profile-import-"))
    os.environ[FOLDER] = str(folder)
    shutil.rmtree(args.data, ignore_errors=True)
    profile = cProfile.Profile()
    began = time.perf_counter()
    profile.enable()
    status = spyglass(["import", "--data", str(args.data), str(args.file)])
    profile.disable()
    if status:
        raise SystemExit(f"spyglass import exited {status}")
    profile.dump_stats(str(folder / f"main-{os.getpid()}-{time.perf_counter() - began:.3f}.prof"))
    report(folder, "main", args.top)
    report(folder, "worker", args.top)
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
