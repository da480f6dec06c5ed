"""One account's requests at once against another account's answer times (issue 44, M1).

On a stock ``spyglass serve --demo``, 32 threads of one key (in a process of their own) send the
same costly request again and again while another account asks for 200 simple counts one after
another: the other account's p50/p95, and how the attacker's requests were answered (429s: the
plan's ``requests_at_once``). Goal: the other account's p95 under 1 s during each attack.

1. free: counts of 240 negated ports and a hostname wildcard (~0.12 s each);
2. enterprise: trends with facets ip:1000,org:1000.

    python bench/inflight.py [--threads 32] [--counts 200] [--only free|enterprise]
"""

from __future__ import annotations

import argparse
import multiprocessing
import threading
import time

import httpx
from abuse import keys, stock_backend

FREE_QUERY = " ".join(f"-port:{n}" for n in range(240)) + " hostname:*a*"
ATTACKS = {
    "free": ("/intel/host/count", {"query": FREE_QUERY}),
    "enterprise": ("/trends/api/v1/search", {"query": "port:22", "facets": "ip:1000,org:1000"}),
}


def _attacker(url: str, threads: int, params: dict, stop, answers) -> None:
    """``threads`` clients sending the same GET until ``stop``; how often each status came."""
    statuses: dict[int, int] = {}
    lock = threading.Lock()

    def client() -> None:
        with httpx.Client(timeout=60) as http:
            while not stop.is_set():
                try:
                    status = http.get(url, params=params).status_code
                except httpx.HTTPError:
                    status = 0
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1

    running = [threading.Thread(target=client) for _ in range(threads)]
    for t in running:
        t.start()
    for t in running:
        t.join()
    answers.put(dict(sorted(statuses.items())))


def victim(url: str, key: str, counts: int) -> tuple[float, float, int]:
    """``counts`` simple counts one after another: p50 and p95 in seconds, and how many were 200."""
    times, ok = [], 0
    with httpx.Client(timeout=30) as client:
        for _ in range(counts):
            started = time.perf_counter()
            try:
                ok += client.get(f"{url}/intel/host/count", params={"key": key, "query": "port:22"}).status_code == 200
            except httpx.HTTPError:
                pass
            times.append(time.perf_counter() - started)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.95))], ok


def attack(name: str, threads: int, counts: int) -> None:
    path, params = ATTACKS[name]
    with stock_backend() as (url, _pid, data):
        attacker, other = keys(data, name, "member")
        quiet = victim(url, other, 50)
        context = multiprocessing.get_context("spawn")
        answers, stop = context.Queue(), context.Event()
        args = (url + path, threads, {"key": attacker, **params}, stop, answers)
        flood = context.Process(target=_attacker, args=args)  # its CPU not under this GIL
        flood.start()
        time.sleep(2)  # the attack under way
        p50, p95, ok = victim(url, other, counts)
        stop.set()
        statuses = answers.get()
        flood.join()
        print(
            f"{name}: {threads} threads of {path}: another account p50 {p50 * 1000:.0f} ms, p95 "
            f"{p95 * 1000:.0f} ms, {ok} of {counts} answered 200 (alone: p50 {quiet[0] * 1000:.0f} ms, "
            f"p95 {quiet[1] * 1000:.0f} ms); the attacker answered {statuses}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--counts", type=int, default=200)
    parser.add_argument("--only", action="append", choices=ATTACKS)
    args = parser.parse_args()
    for name in args.only or ATTACKS:
        attack(name, args.threads, args.counts)


if __name__ == "__main__":
    main()
