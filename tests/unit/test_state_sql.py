"""The seam the SQL states are written over (server/state/sql/db.py): PostgreSQL's spelling of a
statement written for both, and the one migration runner."""

from __future__ import annotations

import sqlite3

import pytest

from spyglass.server.state.sqlite.database import Database, SchemaTooNew, migrate


def test_postgresql_takes_the_statements_written_with_question_marks():
    pytest.importorskip("psycopg")
    from spyglass.server.state.postgres.connect import placeholders

    assert (
        placeholders("SELECT * FROM t WHERE a = ? AND b IN (?, ?)") == "SELECT * FROM t WHERE a = %s AND b IN (%s, %s)"
    )
    # a literal keeps its "?", and a "%" is psycopg's "%%" (its own placeholders' sign)
    assert placeholders("SELECT '?', a || '%' FROM t WHERE b = ?") == "SELECT '?', a || '%%' FROM t WHERE b = %s"


def test_the_sqlite_spellings_of_what_differs(tmp_path):
    db = Database(tmp_path / "t.db", synchronous="NORMAL", migrations=("CREATE TABLE t (a INTEGER PRIMARY KEY);",))
    db.run("INSERT INTO t VALUES (1), (2), (3)")
    among, values = db.any_of("a", [1, 3])
    assert [r["a"] for r in db.all(f"SELECT a FROM t WHERE {among} ORDER BY a", values)] == [1, 3]
    assert [r["a"] for r in db.all(f"SELECT a FROM t WHERE NOT ({among})", values)] == [2]
    assert db.run("INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING") == 0
    assert db.one("INSERT INTO t VALUES (4) RETURNING a", durable=False)["a"] == 4
    assert not db.unstorable("a\x00b") and db.for_update == ""
    db.close()


def test_one_runner_applies_the_missing_steps_and_refuses_a_newer_schema(tmp_path):
    conn = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    steps: list = ["CREATE TABLE t (a INTEGER);", lambda db: db.execute("INSERT INTO t VALUES (?)", (7,))]
    assert migrate(conn, steps[:1]) == 1
    assert migrate(conn, steps) == 2  # only the second step runs
    assert conn.execute("SELECT a FROM t").fetchall() == [(7,)]
    with pytest.raises(SchemaTooNew, match="t.db is at schema version 2, newer than this spyglass knows"):
        migrate(conn, steps[:1], name="t.db")
    conn.close()
