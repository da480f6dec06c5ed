from __future__ import annotations

from spyglass.models.base import APIModel


class AccountProfile(APIModel):
    member: bool
    credits: int
    display_name: str | None = None
    created: str | None = None


class UsageLimits(APIModel):
    scan_credits: int = 0
    query_credits: int = 0
    monitored_ips: int = 0
    # spyglass's budgets of what one account may make the server keep or do (docs/api.md)
    facets: int | None = None  # facets in one count, search or trends request
    facet_size: int | None = None  # values of one facet
    notifiers: int | None = None
    notifier_tests: int | None = None  # an hour, by account and by destination
    saved_queries: int | None = None
    saved_queries_hour: int | None = None
    directory_words: int | None = None  # words and tags of one directory search
    directory_word_length: int | None = None
    internet_scans: int | None = None  # under way at once
    scans_hour: int | None = None  # scans started an hour
    alert_networks_hour: int | None = None  # networks written in alerts an hour
    alert_ignores: int | None = None  # services one alert ignores, all its triggers together
    requests_at_once: int | None = None  # requests in flight at once (a heavy one, such as trends, counts 2)


class ApiInfo(APIModel):
    """Plan information: what the key's account may do and what it has left."""

    plan: str
    scan_credits: int = 0
    query_credits: int = 0
    monitored_ips: int | None = None
    unlocked_left: int = 0
    usage_limits: UsageLimits | None = None
    https: bool = False
    unlocked: bool = False
    telnet: bool = False
