"""The real-time stream: ``stream`` (follow it) and ``replay`` (publish a banner file into a
running backend)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from collections.abc import Awaitable, Callable

from spyglass.cli.common import Common, api_command, positive, with_clients
from spyglass.cli.exits import EXIT_OK, UsageError

FILTERS = ("asn", "countries", "ports", "vulns", "alert")
REPLAY_BATCH = 1000  # banners per request when no rate is given
REPLAY_TICK = 0.25  # seconds between requests at a given rate
CLOSE_WITHIN = 2.0  # seconds the stream may take to close once the command ends (ctrl+c)
FIELDS_CHECKED_AFTER = 20  # banners, before --fields says which fields none of them had


def note(message: str) -> None:
    from spyglass.safetext import clean

    print(f"spyglass stream: {clean(message, one_line=True)}", file=sys.stderr, flush=True)


def report_state(state) -> None:
    """What the reader of a long-running stream needs on stderr: drops, retries, and the gap."""
    if state.status == "reconnecting":
        note(f"connection lost ({state.reason}); reconnecting in {state.retry_in:.1f} s (attempt {state.attempt})")
    elif state.status == "connected" and state.gap:
        note(f"reconnected; missed {state.gap:.1f} s of the stream")


async def follow(clients, args) -> int:
    import json

    from spyglass.cli.render import inert_json
    from spyglass.client.errors import ResponseFormatError
    from spyglass.client.stream import StreamDebug
    from spyglass.client.streamparse import loads
    from spyglass.present.stream import stream_line
    from spyglass.present.values import get_path
    from spyglass.safetext import clean
    from spyglass.streamfiles import DailyFiles

    ended_by_term()
    kind = next((name for name in FILTERS if getattr(args, name) is not None), None)
    relocate = backend_finder(args, clients.stream.transport)

    def on_state(state) -> None:
        report_state(state)
        if state.status == "reconnecting" and relocate is not None:
            relocate()

    options = {"fmt": args.format, "debug": True, "raw": True, "on_state": on_state}
    source = clients.stream
    if kind == "alert":  # --alert alone: every alert of the account; else one, by id or name
        from spyglass.cli.commands.alerts import alert_id

        stream = source.alert(await alert_id(clients, args.alert) if args.alert else None, **options)
    else:
        stream = getattr(source, kind)(getattr(args, kind), **options) if kind else source.banners(**options)
    fields = [f.strip() for f in args.fields.split(",") if f.strip()] if args.fields else None
    files = DailyFiles(args.datadir) if args.datadir else None
    shown = 0
    out = sys.stdout
    absent = set(fields or ())  # the fields no banner seen has had yet

    def say_absent() -> None:
        if absent:
            names = ", ".join(sorted(absent))
            note(
                f"--fields: no banner of the {shown:,} seen has {names} (members such as ip_str, port, org, http.title)"
            )
            absent.clear()

    try:
        async for item in stream:
            if isinstance(item, StreamDebug):
                note(f"the server discarded {item.discarded} banners: this reader fell behind")
                continue
            try:  # raw mode: the bytes are saved and printed as they came, once known to be JSON
                banner = loads(item)
            except ValueError:
                raise ResponseFormatError("the stream sent a line that is not JSON") from None
            if files is not None:
                files.write(item)
            absent.difference_update([f for f in absent if get_path(banner, f) is not None])
            if args.json and not fields:
                out.write(inert_json(item.decode("utf-8", errors="replace")) + "\n")
            elif args.json:
                picked = {f: get_path(banner, f) for f in fields or ()}
                out.write(inert_json(json.dumps(picked, ensure_ascii=False)) + "\n")
            else:
                out.write(clean(stream_line(banner, fields), one_line=True) + "\n")
            out.flush()
            shown += 1
            if shown == FIELDS_CHECKED_AFTER:
                say_absent()
            if args.count and shown >= args.count:
                break
    finally:
        say_absent()
        try:  # interrupted mid-reconnect, closing may wait on a connection attempt: not for long
            await asyncio.wait_for(stream.aclose(), CLOSE_WITHIN)
        except Exception:  # a timeout, or a connection that broke as it closed: the command ends anyway
            pass
        finally:
            if files is not None:
                files.close()
    return EXIT_OK


def backend_finder(args: argparse.Namespace, transport) -> Callable[[], None] | None:
    """With the embedded backend, what moves the stream to where its data dir is served now,
    called before each reconnection: a dashboard that restarts the backend does so on another
    port, and the stream kept asking the old one (newcomer trial 15). None with a server's URL."""
    from pathlib import Path

    from spyglass.config import active_profile, data_dir
    from spyglass.local.datalock import served_by

    if not active_profile(args.profile).embedded:
        return None
    data = Path(args.data or data_dir())

    def relocate() -> None:
        holder = served_by(data)
        if holder is None:
            return  # none serves it now: the stream goes on asking where it was
        stream_url = f"{holder.url.rstrip('/')}/stream"
        if stream_url != transport.base_url:
            transport.move_to(stream_url)
            note(f"the backend of {data} now answers at {holder.url}: following it there")

    return relocate


def ended_by_term() -> None:
    """SIGTERM (`kill`, a service manager) ends the command as ctrl+c does, through the ``finally``
    that writes out what was saved: a gzip file cut short would leave the rest of its day unreadable.
    It is how a follower started in the background ends, since such a job ignores ctrl+c."""
    task = asyncio.current_task()
    if task is not None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)


def stream_command(args: argparse.Namespace) -> int:
    chosen = [name for name in FILTERS if getattr(args, name) is not None]
    if len(chosen) > 1:
        raise UsageError(f"stream: one filter at a time, not --{' and --'.join(chosen)}")
    try:
        return asyncio.run(with_clients(args, lambda clients: follow(clients, args), host="stream"))
    except asyncio.CancelledError:  # SIGTERM (ended_by_term): the status of a process it ended
        return 128 + signal.SIGTERM


def read_banners(path):
    """(line number, line) of each non-empty line of a banner file (JSON lines, gzipped when it
    ends in .gz)."""
    import gzip

    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as fh:
        for number, line in enumerate(fh, 1):
            line = line.strip()
            if line:
                yield number, line


REPLAY_SHOWN, REPLAY_KEPT = 5, 50  # refused lines named on stderr, in --json


async def replay(clients, args):
    import re
    from itertools import islice

    from spyglass.client.stream import collect
    from spyglass.present.values import plural
    from spyglass.safetext import clean

    lines = read_banners(args.file)
    per_batch = max(1, round(args.rate * REPLAY_TICK)) if args.rate else REPLAY_BATCH
    received = collected = bad = 0
    problems: list[str] = []
    next_at = time.monotonic()
    while batch := list(islice(lines, per_batch)):
        if args.rate:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            next_at += len(batch) / args.rate
        result = await collect(clients.transport, [line for _, line in batch])
        received += result.received
        collected += result.collected
        bad += result.bad
        for problem in result.problems[: REPLAY_KEPT - len(problems)]:
            # "line N" of the batch: named by the line of the file it was
            if (found := re.match(r"line (\d+): ", problem)) and 0 < int(found[1]) <= len(batch):
                problem = f"{args.file.name}:{batch[int(found[1]) - 1][0]}: {problem[found.end() :]}"
            problems.append(clean(problem, one_line=True))
    if args.json:
        return {"received": received, "collected": collected, "bad": bad, "problems": problems}
    print(f"{plural(received, 'banner')} sent, {collected:,} new (indexed and published)", file=sys.stderr)
    if bad:
        print(f"{plural(bad, 'line')} refused:", *problems[:REPLAY_SHOWN], sep="\n  ", file=sys.stderr)
    return None


def replay_command(args: argparse.Namespace) -> Awaitable[int]:
    import shlex
    from pathlib import Path

    from spyglass.config import ENV_KEY, active_profile, data_dir
    from spyglass.local.datalock import served_by

    profile = active_profile(args.profile)
    if profile.embedded:  # into the backend that serves the data dir (the dashboard's, or serve's)
        data = Path(args.data or data_dir())
        on = f" --data {shlex.quote(str(data))}" if args.data else ""
        if served_by(data) is None:
            raise UsageError(
                f"replay: it publishes into a running backend, and none serves {data}: open the dashboard "
                f"('spyglass{on}') or run 'spyglass serve{on}' first, or point SPYGLASS_URL at one"
            )
        if not profile.key:  # the local account may not collect: every account sees what it sends
            raise UsageError(
                "replay: it publishes as a collector, which the local account is not: "
                f"{ENV_KEY}=$(spyglass keys create --collector{on}) spyglass{on} replay FILE"
            )
    try:
        args.file.open("rb").close()
    except OSError as exc:
        raise UsageError(f"replay: cannot read {args.file}: {exc.strerror or exc}") from None
    return api_command(replay)(args)


def register(sub, common: Common) -> None:
    from pathlib import Path

    p = sub.add_parser(
        "stream",
        parents=[common.profile, common.data, common.json],
        help="follow the real-time stream of newly collected banners (enterprise)",
        description="Follow the real-time stream: one short line per banner, or one JSON object "
        "per line with --json. Runs until interrupted (or --count), reconnecting through "
        "backend restarts and saying on stderr how long each gap was.",
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument("--asn", metavar="A[,A...]", help="only banners from these ASNs")
    group.add_argument("--countries", metavar="CC[,CC...]", help="only banners from these countries")
    group.add_argument("--ports", metavar="P[,P...]", help="only banners on these ports")
    group.add_argument("--vulns", metavar="CVE[,CVE...]", help="only banners with these vulnerabilities")
    group.add_argument(
        "--alert",
        nargs="?",
        const="",
        metavar="ID",
        help="only banners in the networks of your alerts (or of the alert named, by ID or name)",
    )
    p.add_argument("--format", choices=("json", "sse"), default="json", help="wire format (default json)")
    p.add_argument("--fields", metavar="F[,F...]", help="show these fields (e.g. ip_str,port,org)")
    p.add_argument("--datadir", type=Path, metavar="DIR", help="also save banners to DIR/YYYY-MM-DD.json.gz (UTC)")
    p.add_argument("--count", type=positive, metavar="N", help="stop after N banners")
    p.set_defaults(func=stream_command)

    r = sub.add_parser(
        "replay",
        parents=[common.profile, common.data, common.json],
        help="publish a banner file into a running backend, as newly collected banners",
        description="Send the banners of FILE (JSON lines, .gz too) to a running spyglass backend: "
        "the new ones are indexed and published on its stream, as scan results are. The key needs "
        "the collector role (keys create --collector); each banner records the account that sent "
        "it. Lines the backend refuses (no banner it can hold, or dated more than 5 minutes ahead) "
        "are counted and the first named on stderr.",
    )
    r.add_argument("file", type=Path, metavar="FILE")
    r.add_argument("--rate", type=float, metavar="N", help="banners per second (default: as fast as it takes them)")
    r.set_defaults(func=replay_command)
