"""The backend's state beside its banners: the interfaces every state store implements, and what
they share. SQLite in the data dir (server/state/sqlite/accounts.py) is the embedded default; PostgreSQL
(server/state/postgres/) lets several backends be one service. Both are written once, in sql/, over a
seam each implements. No implementation imports another; server/stores.py is the one place that
knows them all."""


class OverBudget(Exception):
    """A write would take the account past a budget of its plan, counted where it is written:
    an alert past its monitored addresses (``in_use`` are monitored by its other alerts), a
    notifier past ``most`` (``in_use``: its notifiers), an internet scan past those under way
    (``in_use``: its unfinished ones). Nothing was written."""

    def __init__(self, in_use: int) -> None:
        super().__init__(in_use)
        self.in_use = in_use
