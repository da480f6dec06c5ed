"""The state on SQLite, in the data dir: one file each for accounts, alerts, scans and the
directory (a backend with no --state)."""
