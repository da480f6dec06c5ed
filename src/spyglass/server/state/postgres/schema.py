"""The PostgreSQL state's tables: every migration step, in order, for every part of the state.

Append a step for a new layout, never edit one. Each store calls :func:`init_schema` on opening,
and ``spyglass state init`` does too.
"""

from __future__ import annotations

from spyglass.server.state.postgres.connect import Step, check_url, migrate
from spyglass.server.state.sql.alerts import add_spans
from spyglass.server.state.sql.directory import add_words, seed

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
# (server/state/postgres/alerts.py). A delivery a backend claims has its next_try moved to the end of
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

# Scans (state/scans.py): a claim is a lease (owner, lease_until) on the server's clock.
V3_SCANS = """
CREATE TABLE scans (
    id TEXT PRIMARY KEY,
    account_id BIGINT NOT NULL,
    api_key TEXT NOT NULL,
    created TEXT NOT NULL,
    status TEXT NOT NULL,
    status_check TEXT NOT NULL,
    size BIGINT NOT NULL,
    credits_left BIGINT,
    spec TEXT NOT NULL,
    internet BOOLEAN NOT NULL DEFAULT FALSE,
    probes BIGINT NOT NULL,
    probed BIGINT NOT NULL DEFAULT 0,
    found BIGINT NOT NULL DEFAULT 0,
    owner TEXT,
    lease_until TIMESTAMPTZ
);
CREATE INDEX scans_by_account ON scans (account_id, created);
CREATE INDEX scans_unfinished ON scans (created) WHERE status IN ('SUBMITTING', 'QUEUE', 'PROCESSING');
"""

# The saved-query directory (state/directory.py); ``seq`` keeps tags in the order they were given.
V4_DIRECTORY = """
CREATE TABLE queries (
    id BIGSERIAL PRIMARY KEY,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    query TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    votes BIGINT NOT NULL DEFAULT 0,
    owner BIGINT
);
CREATE TABLE query_tags (
    seq BIGSERIAL,
    query_id BIGINT NOT NULL REFERENCES queries(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (query_id, tag)
);
CREATE INDEX query_tags_by_tag ON query_tags(tag);
CREATE TABLE query_votes (
    query_id BIGINT NOT NULL REFERENCES queries(id) ON DELETE CASCADE,
    account BIGINT NOT NULL,
    value INTEGER NOT NULL CHECK (value IN (-1, 1)),
    PRIMARY KEY (query_id, account)
);
"""


MIGRATIONS: tuple[Step, ...] = (
    V1_ACCOUNTS,
    V2_ALERTS,
    V3_SCANS,
    V4_DIRECTORY,
    seed,  # the directory's starting set, as on SQLite
    add_words("seq"),
    add_spans("BYTEA"),  # each alert's ranges packed beside its networks
)


def init_schema(url: str) -> int:
    """Create or upgrade the state's tables at ``url`` (``spyglass state init``); the version."""
    return migrate(check_url(url), MIGRATIONS)
