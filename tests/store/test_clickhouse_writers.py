"""Several writers at once on one ClickHouse store (importers on several machines, collectors of
several backends): whatever the interleaving, one current banner a service and every banner once."""

from __future__ import annotations

import socket
import threading
from collections import Counter

import orjson
import pytest

from spyglass.query import parse_facets, parse_strict
from spyglass.server.clickhouse import ClickHouseStore
from spyglass.server.clickhouse import connection as clickhouse_connection
from spyglass.server.clickhouse.connection import Connection
from tests.store.conftest import database

SERVICES, ROUNDS = 12, 4
TIE = ("198.18.22.1", 443)
BEFORE = {"ip_str": "198.18.20.0", "port": 80, "transport": "tcp", "timestamp": "2025-12-01T00:00:00", "data": "before"}


@pytest.fixture(params=["clickhouse_server", "clickhouse_cluster"])
def address(request, tmp_path) -> str:
    return request.getfixturevalue(request.param).address(database(tmp_path))


def banner(ip: str, port: int, minute: int, data: str) -> dict:
    return {"ip_str": ip, "port": port, "transport": "tcp", "timestamp": f"2026-01-01T00:{minute:02d}:00", "data": data}


def batch(writer: int, round_: int) -> list[dict]:
    """What ``writer`` adds in ``round_``: a banner of every service, newer than the other writer's
    of the round before (the newest alternates between them); one banner both add, the same bytes;
    and of one service a banner at the time the other writer's has too."""
    minute = 2 * round_ + writer
    out = [banner(f"198.18.20.{s}", 80, minute, f"writer {writer} minute {minute}") for s in range(SERVICES)]
    out.append(banner(f"198.18.21.{round_}", 22, 0, "both"))
    out.append(dict(banner(*TIE, 59, "tie"), hash=100 * writer + round_))  # a banner is its time and hash
    return out


def write_together(stores: list[ClickHouseStore]) -> None:
    """Each store's writer opened at once (each sees what the other saw), then every round added
    by both at once and stored before the next."""
    barrier = threading.Barrier(len(stores))
    failed: list[BaseException] = []

    def write(w: int) -> None:
        try:
            store = stores[w]
            with store.writing() as writer:
                barrier.wait()
                for r in range(ROUNDS):
                    barrier.wait()
                    writer.add([store.prepare(b) for b in batch(w, r)])
                    writer.flush()
                    writer.wait()
        except BaseException as exc:  # noqa: BLE001 (said below)
            failed.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=write, args=(w,)) for w in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failed, failed


@pytest.mark.parametrize("touched", ["named", "by their marks"])
@pytest.mark.parametrize("start", ["empty", "not empty"])
def test_racing_writers_leave_one_current_banner_a_service_and_every_banner_once(address, start, touched, monkeypatch):
    if touched == "by their marks":  # as a writer of more services than one look-up names (an import)
        monkeypatch.setattr(clickhouse_connection, "LOOKUP_CHUNK", 5)
    stores = [ClickHouseStore(address) for _ in range(2)]
    if start == "not empty":  # the writers look up what is stored: what the other adds they still miss
        with stores[0].writing() as writer:
            writer.add([stores[0].prepare(BEFORE)])
    write_together(stores)
    store = stores[0]

    sent = {orjson.dumps(b): b for w in (0, 1) for r in range(ROUNDS) for b in batch(w, r)}
    if start == "not empty":
        sent[orjson.dumps(BEFORE)] = BEFORE
    newest: dict[tuple, dict] = {}
    for b in sent.values():
        service = (b["ip_str"], b["port"])
        old = newest.get(service)
        if old is None or (b["timestamp"], store.prepare(b).key) > (old["timestamp"], store.prepare(old).key):
            newest[service] = b
    # every banner once: in the total, the bodies the bulk data reads, a host's history
    assert store.total() == len(sent)
    marks = [m for rows in store.added_since(0, 1000) for m, _ in rows]
    assert Counter(store.raw_bodies(marks).values()) == Counter(list(sent))
    assert sorted(map(orjson.dumps, store.host("198.18.20.3"))) == sorted(
        k for k, b in sent.items() if b["ip_str"] == "198.18.20.3"
    )
    # one current banner a service, the newest, in every query
    query = parse_strict("net:198.18.0.0/15")
    total, found, facets = store.search(query, parse_facets("port"))
    assert total == len(newest) == store.count(query, [])[0]
    assert sorted(map(orjson.dumps, found)) == sorted(map(orjson.dumps, newest.values()))
    assert {f["value"]: f["count"] for f in facets["port"]} == {"80": SERVICES, "22": ROUNDS, "443": 1}
    for (ip, port), b in newest.items():
        assert store.current(ip, port, "tcp") == b
    assert newest[TIE]["data"] == "tie"  # of the banners at one time, the same one in each query
    helpers = store.connection.execute("SELECT name FROM system.tables WHERE name LIKE 'deleting%'")
    assert helpers == []  # gone once the copies are deleted
    for s in stores:
        s.close()


def test_two_writers_never_give_one_mark(address, monkeypatch):
    """Two writers whose clocks read the same (two machines, or two processes in one nanosecond)
    still give every banner a mark of its own: a body is found by its mark."""
    import time

    monkeypatch.setattr(time, "time_ns", lambda: 1_800_000_000_000_000_000)
    stores = [ClickHouseStore(address) for _ in range(2)]
    for w, store in enumerate(stores):
        with store.writing() as writer:
            writer.add([store.prepare(banner(f"198.18.23.{w}", 80 + i, 1, f"writer {w}")) for i in range(5)])
    marks = [m for rows in stores[0].added_since(0, 1000) for m, _ in rows]
    assert len(set(marks)) == 10
    for w in range(2):
        assert {b["data"] for b in stores[0].host(f"198.18.23.{w}")} == {f"writer {w}"}
    for store in stores:
        store.close()


def test_a_small_writer_looks_up_only_the_addresses_it_adds(clickhouse_server, tmp_path, monkeypatch):
    """A collector's batch of a few services looks up their banners, and at its end what racing
    writers left of them, by address (the table's order): ClickHouse reads the granules that hold
    them, not the service of every row of a store of billions (here: at most 20,000 rows a lookup
    in a store of 40,000)."""
    store = ClickHouseStore(clickhouse_server.address(database(tmp_path)))
    with store.writing() as writer:
        for first in range(0, 40_000, 10_000):
            writer.add(
                [
                    store.prepare(banner(f"10.{n // 65536}.{n // 256 % 256}.{n % 256}", 80, 1, "old"))
                    for n in range(first, first + 10_000)
                ]
            )
    looked_up = []

    def execute(self, sql, params=None, raw=False, columnar=False):
        settings = {"strings_as_bytes": True} if raw else {}
        if "service IN" in sql:
            looked_up.append(sql)
            settings["max_rows_to_read"] = 20_000
        return self.client.execute(sql, params, settings=settings or None, columnar=columnar)

    monkeypatch.setattr(Connection, "execute", execute)
    newer = banner("10.0.48.57", 80, 2, "newer")
    with store.writing() as writer:
        writer.add([store.prepare(newer)])
    assert len(looked_up) >= 3  # the services' banners, then the two checks of the reconciliation
    monkeypatch.undo()
    total, page, _ = store.search(parse_strict("net:10.0.48.57/32"), [])
    assert total == 1 and page == [newer] and len(store.host("10.0.48.57")) == 2
    store.close()


class CountingRelay:
    """A TCP relay on loopback in front of a server's port that counts the connections it took."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            self.accepted += 1
            server = socket.create_connection(("127.0.0.1", self.target))
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with source, sink:
            try:
                while data := source.recv(1 << 16):
                    sink.sendall(data)
            except OSError:  # the other direction closed both sockets
                pass

    def close(self) -> None:
        self.listener.close()


def test_a_writers_inserts_keep_their_http_connection_alive(clickhouse_server, tmp_path, monkeypatch):
    """A writer's RowBinary inserts reuse a kept-alive HTTP connection rather than opening one each."""
    relay = CountingRelay(clickhouse_server.http_port)
    url = f"{clickhouse_server.url}/{database(tmp_path)}?http_port={relay.port}"
    store = ClickHouseStore(url)
    inserts = []
    real = store.connection.insert
    monkeypatch.setattr(store.connection, "insert", lambda *args: (inserts.append(args[0]), real(*args)))
    for round_ in range(3):  # three writers, each flushing its bodies, rows and current rows
        with store.writing() as writer:
            writer.add([store.prepare(b) for w in (0, 1) for b in batch(w, round_)])
    assert store.total() == len({orjson.dumps(b) for r in range(3) for w in (0, 1) for b in batch(w, r)})
    assert len(inserts) >= 9
    assert 1 <= relay.accepted < len(inserts)
    store.close()
    relay.close()
