"""The state's tables on PostgreSQL: the migration steps of every part of the state, in one list.

Append a step for a new layout, never edit one (see connect.migrate). Each part's step is its own
(accounts, alerts, ...), so that the parts' implementations import nothing of each other.
"""

from __future__ import annotations

from spyglass.server.postgres.connect import check_url, migrate

V1_ACCOUNTS = """
CREATE TABLE accounts (
    id BIGSERIAL PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    email TEXT,
    display_name TEXT,
    created TEXT NOT NULL,
    plan TEXT NOT NULL,
    researcher BOOLEAN NOT NULL DEFAULT FALSE,
    collector BOOLEAN NOT NULL DEFAULT FALSE,
    query_credits BIGINT NOT NULL CHECK (query_credits >= 0),
    scan_credits BIGINT NOT NULL CHECK (scan_credits >= 0),
    period TEXT NOT NULL
);
CREATE INDEX accounts_by_email ON accounts (lower(email));
CREATE TABLE api_keys (
    key TEXT PRIMARY KEY,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    created TEXT NOT NULL
);
CREATE TABLE organizations (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created TEXT NOT NULL,
    upgrade_type TEXT NOT NULL,
    domains TEXT NOT NULL DEFAULT '[]',
    logo BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE TABLE org_members (
    account_id BIGINT PRIMARY KEY REFERENCES accounts(id),
    org_id TEXT NOT NULL REFERENCES organizations(id),
    role TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    added TEXT NOT NULL
);
CREATE INDEX org_members_by_org ON org_members(org_id);
CREATE TABLE org_invitations (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    invited TEXT NOT NULL,
    PRIMARY KEY (account_id, org_id)
);
"""

# Alerts, notifiers, the delivery queue and its log, and collected banners held until matched
# (server/postgres/alerts.py). A delivery a backend claims has its next_try moved to the end of
# its lease: until then no other backend takes it; after, any may (the claimer died).
V2_ALERTS = """
CREATE TABLE alerts (
    id TEXT PRIMARY KEY,
    account_id BIGINT NOT NULL,
    name TEXT NOT NULL,
    created TEXT NOT NULL,
    expires BIGINT NOT NULL,
    networks TEXT NOT NULL,
    size BIGINT NOT NULL
);
CREATE INDEX alerts_account ON alerts(account_id);
CREATE TABLE alert_triggers (
    alert_id TEXT NOT NULL,
    trigger TEXT NOT NULL,
    PRIMARY KEY (alert_id, trigger)
);
CREATE TABLE alert_ignores (
    alert_id TEXT NOT NULL,
    trigger TEXT NOT NULL,
    service TEXT NOT NULL,
    PRIMARY KEY (alert_id, trigger, service)
);
CREATE TABLE notifiers (
    account_id BIGINT NOT NULL,
    id TEXT NOT NULL,
    provider TEXT NOT NULL,
    description TEXT,
    args TEXT NOT NULL,
    created TEXT NOT NULL,
    PRIMARY KEY (account_id, id)
);
CREATE TABLE alert_notifiers (
    alert_id TEXT NOT NULL,
    notifier_id TEXT NOT NULL,
    PRIMARY KEY (alert_id, notifier_id)
);
CREATE TABLE alert_changes (n BIGINT NOT NULL);
INSERT INTO alert_changes VALUES (0);
CREATE TABLE deliveries (
    id BIGSERIAL PRIMARY KEY,
    event TEXT NOT NULL,
    account_id BIGINT NOT NULL,
    alert_id TEXT NOT NULL,
    notifier_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    created TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_try DOUBLE PRECISION NOT NULL,
    state TEXT NOT NULL,
    UNIQUE (event, notifier_id)
);
CREATE INDEX deliveries_due ON deliveries(state, next_try);
CREATE TABLE delivery_log (
    id BIGSERIAL PRIMARY KEY,
    delivery_id BIGINT,
    account_id BIGINT NOT NULL,
    alert_id TEXT,
    notifier_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    event TEXT NOT NULL,
    at TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE INDEX delivery_log_alert ON delivery_log(alert_id, id);
CREATE TABLE held_banners (
    id BIGSERIAL PRIMARY KEY,
    batch TEXT NOT NULL,
    held DOUBLE PRECISION NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_try DOUBLE PRECISION NOT NULL
);
CREATE INDEX held_banners_due ON held_banners(next_try);
"""

MIGRATIONS = (V1_ACCOUNTS, V2_ALERTS)  # V2: a placeholder number, renumbered when the slices merge


def init_schema(url: str) -> int:
    """Create or upgrade the state's tables at ``url`` (``spyglass state init``); the version."""
    return migrate(check_url(url), MIGRATIONS)
