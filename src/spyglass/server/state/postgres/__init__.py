"""The state on PostgreSQL (psycopg 3 with a connection pool): several backends, one service."""

from spyglass.server.state.postgres.accounts import PostgresAccounts
from spyglass.server.state.postgres.connect import shown

__all__ = ["PostgresAccounts", "shown"]
