"""Real ClickHouse servers on loopback for tests and benchmarks: one server, or a cluster of shards.

Each server runs from a config file written under its own folder (ports, paths, a default user on
127.0.0.1). The OS chooses its ports: the config asks for port 0 (native and HTTP) and the ports
are read back from the server's listening sockets in /proc, so two test workers never meet. A
cluster's ``remote_servers`` is written once every shard listens (its ports known), and each
server reloads it (ClickHouse watches its config file). Parts are compressed with zstd, the
store's advice to operators: banner text compresses far better than with the default LZ4. Fresh
parts (an insert's, small merges') at level 1, parts merged from 10 MB or more at level 9, which
keeps 12% less than level 1: an import's inserts cost the server half the CPU of level 9
throughout, and the parts that last end as small (measured at 300,000 banners).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

from spyglass.testing import Unavailable

BINARY = "clickhouse-server"
INSTALL = "apt-get install -y clickhouse-server (Debian's package)"

CONFIG = """<yandex>
  <listen_host>127.0.0.1</listen_host>
  <tcp_port>{tcp_port}</tcp_port>
  <http_port>{http_port}</http_port>
  <path>{folder}/data/</path>
  <tmp_path>{folder}/tmp/</tmp_path>
  <format_schema_path>{folder}/schema/</format_schema_path>
  <logger><level>warning</level><log>{folder}/server.log</log><errorlog>{folder}/error.log</errorlog></logger>
  <mark_cache_size>268435456</mark_cache_size>
  <compression><case><method>zstd</method><level>1</level></case>
    <case><min_part_size>10000000</min_part_size><method>zstd</method><level>9</level></case></compression>
  <users_config>{folder}/config.xml</users_config>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <profiles><default><max_threads>2</max_threads></default></profiles>
  <quotas><default/></quotas>
  <remote_servers>{clusters}</remote_servers>
</yandex>
"""


def binary() -> str:
    """The server's path (Unavailable where it is not installed)."""
    found = shutil.which(BINARY) or next(
        (p for p in ("/usr/sbin/" + BINARY, "/usr/bin/" + BINARY) if Path(p).exists()), None
    )
    if found:
        return found
    raise Unavailable(f"{BINARY} is not installed: {INSTALL}")


def _listening_ports(pid: int) -> set[int]:
    """The TCP ports process ``pid`` listens on (from its sockets' inodes in /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _answers_http(port: int) -> bool:
    """Whether ``port`` is a ClickHouse HTTP interface (it answers ``Ok.`` at /)."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        connection.request("GET", "/")
        return connection.getresponse().read() == b"Ok.\n"
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


# The server ended by the kernel when the process that started it ends, however that ends (a test
# run or a bench killed by a signal runs no ``stop()``): util-linux's setpriv sets that and execs
# the server (a preexec_fn could deadlock the fork of a process with threads).
ENDED_WITH_US = ["setpriv", "--pdeathsig", "TERM", "--"] if shutil.which("setpriv") else []


class ClickHouseServer:
    """One clickhouse-server on loopback, its files under ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.process: subprocess.Popen | None = None
        self.port = self.http_port = 0

    def write_config(self, clusters: str = "") -> None:
        """Ports 0 (the OS chooses) on the first start; the same ports again once they are known,
        so a server stopped and started again is at the address a store was given."""
        path = self.folder / "config.xml"
        ports = {"tcp_port": self.port, "http_port": self.http_port}
        path.write_text(CONFIG.format(folder=self.folder, clusters=clusters, **ports))

    @property
    def url(self) -> str:
        return f"clickhouse://127.0.0.1:{self.port}"

    def address(self, database: str, cluster: str = "") -> str:
        """The store's address of ``database`` on this server (over ``cluster``: the Distributed tables)."""
        return f"{self.url}/{database}?http_port={self.http_port}" + (f"&cluster={cluster}" if cluster else "")

    def start(self, timeout: float = 60.0) -> ClickHouseServer:
        self.write_config()
        config = self.folder / "config.xml"
        log = open(self.folder / "stdout.log", "wb")
        command = [*ENDED_WITH_US, binary(), f"--config-file={config}"]
        self.process = subprocess.Popen(command, stdout=log, stderr=log, cwd=self.folder)
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"clickhouse-server exited: {self._log_tail()}")
            ports = _listening_ports(self.process.pid)
            if len(ports) == 2:  # the native and the HTTP port: the one that answers HTTP is the latter
                self.http_port = next((p for p in ports if _answers_http(p)), 0)
                self.port = min(ports - {self.http_port})
                if self.http_port and self._answers():
                    return self
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"clickhouse-server did not start in {timeout:.0f} s: {self._log_tail()}")
            time.sleep(0.1)

    def _answers(self) -> bool:
        from clickhouse_driver import Client

        try:
            Client("127.0.0.1", port=self.port, connect_timeout=2).execute("SELECT 1")
        except Exception:
            return False
        return True

    def query(self, sql: str) -> list:
        from clickhouse_driver import Client

        return Client("127.0.0.1", port=self.port).execute(sql)

    def _log_tail(self) -> str:
        text = ""
        for name in ("error.log", "stdout.log"):
            path = self.folder / name
            if path.exists():
                text += path.read_text(errors="replace")[-2000:]
        return text.strip() or "(no log)"

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class ClickHouseCluster:
    """Shards on loopback (one server each) named ``cluster`` in every server's ``remote_servers``."""

    def __init__(self, folder: Path, shards: int = 2, name: str = "spyglass") -> None:
        self.name = name
        self.servers = [ClickHouseServer(folder / f"shard{i + 1}") for i in range(shards)]

    def address(self, database: str) -> str:
        """The store's address of ``database`` over the whole cluster."""
        return self.servers[0].address(database, self.name)

    def start(self, timeout: float = 60.0) -> ClickHouseCluster:
        try:
            for server in self.servers:
                server.start(timeout)
            shards = "".join(
                f"<shard><replica><host>127.0.0.1</host><port>{s.port}</port></replica></shard>" for s in self.servers
            )
            for server in self.servers:
                server.write_config(f"<{self.name}>{shards}</{self.name}>")
            deadline = time.monotonic() + timeout
            for server in self.servers:  # each reloads its config within a few seconds
                while not server.query(f"SELECT 1 FROM system.clusters WHERE cluster = '{self.name}'"):
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"the cluster did not appear in system.clusters: {server._log_tail()}")
                    time.sleep(0.2)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


class CurrentEngine:
    """Today's ClickHouse (26.x) in this process, through chdb (PyPI): what the store sends an
    18.16 server, run on a current engine. It speaks no protocol, so :func:`current_engine_store`
    hands it the store's statements with their parameters put in as clickhouse-driver puts them,
    and reads the answers as the driver gives them. One per process (chdb holds one session)."""

    def __init__(self, folder: Path) -> None:
        try:
            import chdb.session as chdb
        except ImportError:
            raise Unavailable("chdb is not installed: pip install -e '.[test]'") from None
        from clickhouse_driver import Client

        self.folder = folder
        self.session = chdb.Session(str(folder / "engine"))
        self.context = Client("127.0.0.1").connection.context  # how the driver escapes a parameter
        self.lock = threading.Lock()  # one statement at a time (the store runs several side by side)
        self.session.query("SET output_format_arrow_string_as_string = 0")  # strings as bytes: bodies exact
        self.used = ""  # the database of the session's last USE

    def run(
        self, sql: str, database: str, params: dict | list | None = None, raw: bool = False, columnar: bool = False
    ) -> list:
        import pyarrow
        from clickhouse_driver.util.escape import escape_param, escape_params

        if isinstance(params, list):  # an INSERT's rows
            rows = ("(" + ", ".join(str(escape_param(v, self.context)) for v in row) + ")" for row in params)
            sql += " " + ", ".join(rows)
        elif params:
            sql = sql % escape_params(params, self.context)
        with self.lock:
            if database and database != self.used:
                self.session.query(f"USE {database}")
                self.used = database
            data = self.session.query(sql, "ArrowStream").bytes()
        if not data:
            return []
        table = pyarrow.ipc.open_stream(data).read_all()
        columns = [[_as_driver(v, raw) for v in column.to_pylist()] for column in table.columns]
        return [tuple(c) for c in columns] if columnar else list(zip(*columns, strict=True))


def _as_driver(value: object, raw: bool) -> object:
    """A value from Arrow as clickhouse-driver gives it: strings as text (bytes with
    ``strings_as_bytes``), tuples as tuples."""
    if isinstance(value, bytes):
        return value if raw else value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return tuple(_as_driver(v, raw) for v in value.values())
    if isinstance(value, list):
        return [_as_driver(v, raw) for v in value]
    return value


class _EngineClient:
    """A driver client's ``execute`` and ``disconnect``, on the current engine."""

    def __init__(self, engine: CurrentEngine, database: str) -> None:
        self.engine, self.database = engine, database

    def execute(
        self, sql: str, params: dict | list | None = None, settings: dict | None = None, columnar: bool = False
    ) -> list:
        raw = bool(settings and settings.get("strings_as_bytes"))
        return self.engine.run(sql, self.database, params, raw=raw, columnar=columnar)

    def disconnect(self) -> None:
        pass


def current_engine_store(engine: CurrentEngine, database: str):
    """A ClickHouseStore whose statements run on ``engine``: queries through its client, inserts
    of RowBinary rows from a file (the server's HTTP interface takes them as they are)."""
    from spyglass.server.banners.store import StoreUnavailable
    from spyglass.server.clickhouse import ClickHouseStore, tables
    from spyglass.server.clickhouse.connection import Connection

    class EngineConnection(Connection):
        def connect(self, host=None, port=None, database=None):
            return _EngineClient(engine, database or self.database)

        def execute(self, sql, params=None, raw=False, columnar=False):
            try:
                return engine.run(sql, self.database, params, raw=raw, columnar=columnar)
            except Exception as exc:  # as the store says a server's failure
                raise StoreUnavailable(f"the banner store failed: {exc}") from exc

        def insert(self, table, columns, rows):
            types = dict(c.split(" ", 1) for c in tables.TABLE_COLUMNS[table].split(", "))  # one server: no _shards
            structure = ", ".join(f"{name} {types[name]}" for name in columns)
            path = engine.folder / f"rows-{threading.get_ident()}-{time.monotonic_ns()}.bin"
            path.write_bytes(rows)
            try:
                self.execute(
                    f"INSERT INTO {self.database}.{table} ({', '.join(columns)}) "
                    f"SELECT * FROM file('{path}', 'RowBinary', '{structure}')"
                )
            finally:
                path.unlink()

    url = f"clickhouse://127.0.0.1:9000/{database}"
    return ClickHouseStore(url, connection=EngineConnection(url))
