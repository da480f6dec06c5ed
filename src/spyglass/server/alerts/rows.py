"""The alert state's rows, kept in :mod:`spyglass.server.state.alertrows` beside the interface that
hands them out. This name stays only for the alert stores (server/alerts/store.py,
server/postgres/alerts.py) until they import the rows from there; nothing else imports it."""

from spyglass.server.state.alertrows import AlertRow, Busy, Delivery, Held, NotifierRow

__all__ = ["AlertRow", "Busy", "Delivery", "Held", "NotifierRow"]
