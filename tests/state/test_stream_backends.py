"""The real-time stream of one service of two backends: two ``spyglass serve`` processes, each
with its own data dir, over one ClickHouse banner store and one PostgreSQL state. What is
collected through one reaches the stream readers of both, every banner once, in order."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import orjson

from spyglass.server.clickhouse import ClickHouseStore
from spyglass.testing.backend import serve
from spyglass.testing.clickhouse import ClickHouseServer
from tests.servers import installed
from tests.state.conftest import database
from tests.state.shared import state_key
from tests.store.conftest import clickhouse_server  # noqa: F401 (the fixture)

NS = "intel"


class Reader:
    """A stream followed in a thread: the banners it sent, as they come."""

    def __init__(self, url: str, key: str) -> None:
        self.banners: list[dict] = []
        self.opened = threading.Event()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._read, args=(url, key), daemon=True)
        self.thread.start()
        assert self.opened.wait(15), f"the stream at {url} did not answer"

    def _read(self, url: str, key: str) -> None:
        with httpx.stream("GET", url, params={"key": key}, timeout=httpx.Timeout(5, read=None)) as r:
            assert r.status_code == 200, r.read()
            self.opened.set()  # subscribed before the answer began: nothing after it is missed
            for line in r.iter_lines():
                if self.done.is_set():
                    return
                if line.strip():
                    self.banners.append(orjson.loads(line))

    def wait_for(self, address: str, timeout: float = 20) -> list[tuple[str, int]]:
        """Once ``address`` came, what came: (address, port) in the order it did."""
        deadline = time.monotonic() + timeout
        while not any(b["ip_str"] == address for b in self.banners):
            assert time.monotonic() < deadline, f"{address} never came: {len(self.banners)} banners did"
            time.sleep(0.05)
        self.done.set()
        return [(b["ip_str"], b["port"]) for b in self.banners]


def until(done: Callable[[], object], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "it never happened"
        time.sleep(0.05)


def banners(first: int, n: int) -> list[dict]:
    return [
        {
            "ip_str": f"198.51.100.{first + i}",
            "port": 1000 + first + i,
            "transport": "tcp",
            "timestamp": f"2026-02-01T00:00:{first + i:02d}.000000",
            "data": f"banner {first + i}\n",
        }
        for i in range(n)
    ]


def collect(url: str, key: str, batch: list[dict]) -> None:
    body = b"".join(orjson.dumps(b) + b"\n" for b in batch)
    r = httpx.post(f"{url}/spyglass/collect", params={"key": key}, content=body, timeout=30)
    assert r.status_code == 200 and r.json()["collected"] == len(batch), r.text


@contextmanager
def two_backends(tmp_path: Path, store: str, state: str) -> Iterator[tuple[str, str]]:
    with ExitStack() as stack:
        a, b = (
            stack.enter_context(serve(tmp_path / name, "--store", store, "--state", state, "--no-bulk-data"))
            for name in ("a", "b")
        )
        yield a, b


def test_banners_collected_on_one_backend_reach_the_readers_of_both_once_in_order(
    clickhouse_server,  # noqa: F811
    postgres_url,
    tmp_path,
):
    store = clickhouse_server.address(database(tmp_path))
    key = state_key(postgres_url, tmp_path / "keys", collector=True)
    with two_backends(tmp_path, store, postgres_url) as (a, b):
        on_b = Reader(f"{b}/stream/{NS}/banners", key)
        on_a = Reader(f"{a}/stream/{NS}/banners", key)
        sent = banners(1, 10) + banners(11, 10) + banners(21, 10)
        for i in range(0, 30, 10):  # three collections, one after another
            collect(a, key, sent[i : i + 10])
        expected = [(s["ip_str"], s["port"]) for s in sent]
        assert on_b.wait_for("198.51.100.30") == expected
        assert on_a.wait_for("198.51.100.30") == expected  # its own, once: not also from the store
        assert [x["_id"] for x in on_a.banners] == [x["_id"] for x in on_b.banners]  # the same everywhere
        assert len({x["_id"] for x in on_a.banners}) == 30
        again = Reader(f"{a}/stream/{NS}/banners", key)
        collect(b, key, banners(41, 1))  # and the other way
        assert again.wait_for("198.51.100.41") == [("198.51.100.41", 1041)]


def test_a_banner_stored_late_under_an_older_mark_is_streamed_still(
    clickhouse_server,  # noqa: F811
    postgres_url,
    tmp_path,
):
    """Marks are each writer's clock: another writer's insert can land after a newer mark was read."""
    store = clickhouse_server.address(database(tmp_path))
    key = state_key(postgres_url, tmp_path / "keys", collector=True)
    with two_backends(tmp_path, store, postgres_url) as (a, b):
        on_b = Reader(f"{b}/stream/{NS}/banners", key)
        collect(a, key, banners(1, 1))
        until(lambda: on_b.banners)
        writer = ClickHouseStore(store)
        older = writer.last_mark() - 2_000_000_000  # a writer whose clock read 2 s earlier
        with writer.writing() as batch:
            batch.add([writer.prepare(b) for b in banners(2, 1)], marks=[older])
        writer.close()
        collect(a, key, banners(3, 1))
        assert on_b.wait_for("198.51.100.3") == [("198.51.100.1", 1001), ("198.51.100.2", 1002), ("198.51.100.3", 1003)]


def test_a_banner_stored_twice_under_two_marks_is_streamed_once(
    clickhouse_server,  # noqa: F811
    postgres_url,
    tmp_path,
):
    """Two backends that collect one banner at once store it twice, until the later writer
    deletes its copy: here the second copy stays (a body of its own, under a later mark)."""
    from clickhouse_driver import Client

    db = database(tmp_path)
    store = clickhouse_server.address(db)
    key = state_key(postgres_url, tmp_path / "keys", collector=True)
    with two_backends(tmp_path, store, postgres_url) as (a, b):
        on_b = Reader(f"{b}/stream/{NS}/banners", key)
        collect(a, key, banners(1, 1))
        until(lambda: on_b.banners)
        reader = ClickHouseStore(store)
        mark = reader.last_mark()
        (body,) = reader.raw_bodies([mark]).values()
        reader.close()
        copy = Client("127.0.0.1", port=clickhouse_server.port, database=db)
        copy.execute("INSERT INTO bodies (mark, body) VALUES", [(mark + 1, body.decode())])
        copy.disconnect()
        collect(a, key, banners(2, 1))
        assert on_b.wait_for("198.51.100.2") == [("198.51.100.1", 1001), ("198.51.100.2", 1002)]


def test_alert_streams_on_one_backend_carry_what_another_collects(
    clickhouse_server,  # noqa: F811
    postgres_url,
    tmp_path,
):
    store = clickhouse_server.address(database(tmp_path))
    key = state_key(postgres_url, tmp_path / "keys", collector=True)
    with two_backends(tmp_path, store, postgres_url) as (a, b):
        made = httpx.post(
            f"{b}/{NS}/alert", params={"key": key}, json={"name": "lab", "filters": {"ip": ["198.51.100.8/29"]}}
        )
        assert made.status_code == 200, made.text
        every = Reader(f"{b}/stream/{NS}/alert", key)
        one = Reader(f"{b}/stream/{NS}/alert/{made.json()['id']}", key)
        collect(a, key, banners(1, 20))  # .8 to .15 are in the alert's network
        inside = [(f"198.51.100.{n}", 1000 + n) for n in range(8, 16)]
        assert every.wait_for("198.51.100.15") == inside
        assert one.wait_for("198.51.100.15") == inside


def test_streams_stay_open_through_a_store_outage_and_carry_on(postgres_url, tmp_path):
    with installed():
        clickhouse = ClickHouseServer(tmp_path / "clickhouse").start()  # its own: this test stops it
    try:
        store = clickhouse.address(database(tmp_path))
        key = state_key(postgres_url, tmp_path / "keys", collector=True)
        log = tmp_path / "b.log"
        with (
            serve(tmp_path / "a", "--store", store, "--state", postgres_url, "--no-bulk-data") as a,
            serve(tmp_path / "b", "--store", store, "--state", postgres_url, "--no-bulk-data", log=log) as b,
        ):
            on_b = Reader(f"{b}/stream/{NS}/banners", key)
            collect(a, key, banners(1, 1))
            until(lambda: on_b.banners)
            clickhouse.stop()
            until(lambda: "cannot read the banner store" in log.read_text())
            clickhouse.start()  # on the same ports, its data kept
            collect(a, key, banners(2, 1))
            assert on_b.wait_for("198.51.100.2") == [("198.51.100.1", 1001), ("198.51.100.2", 1002)]
            said = log.read_text()
        assert said.count("cannot read the banner store") == 1 and "reads the banner store again" in said
    finally:
        clickhouse.stop()


def test_follow_store_without_a_shared_store_is_one_line_and_exit_2(tmp_path, capsys):
    from spyglass.cli import EXIT_USAGE, main

    assert main(["serve", "--follow-store", "--data", str(tmp_path)]) == EXIT_USAGE
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--follow-store follows a shared banner store" in err


def test_following_the_store_is_on_with_a_shared_store_and_state_or_when_asked(monkeypatch):
    from spyglass.cli import build_parser
    from spyglass.cli.commands.serve import settings_from

    def follows(*argv: str) -> bool:
        return settings_from(build_parser().parse_args(["serve", "--data", "/nonexistent", *argv])).follow_store

    monkeypatch.delenv("SPYGLASS_STORE", raising=False)
    monkeypatch.delenv("SPYGLASS_STATE", raising=False)
    store, state = ("--store", "clickhouse://127.0.0.1/intel"), ("--state", "postgresql://u@127.0.0.1/db")
    assert not follows() and not follows(*store) and not follows(*state)
    assert follows(*store, *state) and follows(*store, "--follow-store")
