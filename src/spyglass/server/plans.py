"""API plans: monthly allowances and which methods each plan may call."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Plan:
    name: str
    query_credits: int
    scan_credits: int
    monitored_ips: int
    scan_ips: int  # the most addresses one on-demand scan may cover (a /24 is 256)
    paid: bool  # on-demand scans need a paid plan
    enterprise: bool  # stream, trends, bulk data and organization methods
    https: bool
    telnet: bool
    # What one account may make the server keep or do (issue 44): each is refused past it with a
    # 4xx that names it, and `spyglass info` shows them.
    facets: int = 10  # facets in one count, search or trends request
    facet_size: int = 1000  # values of one facet
    notifiers: int = 50  # notifiers an account keeps
    notifier_tests: int = 20  # notifier tests an hour (and as many to one destination, any account)
    saved_queries: int = 100  # queries an account keeps in the shared directory
    saved_queries_hour: int = 20  # queries an account may save an hour: one cannot own the listings
    directory_words: int = 16  # words (and tags) of one directory search
    directory_word_length: int = 100  # characters of one of them
    internet_scans: int = 1  # internet scans under way at once (not yet done or cancelled)
    scans_hour: int = 30  # scans (of addresses or internet-wide) it may start an hour: each is a record kept
    alert_networks_hour: int = 1000  # networks its alert creates and edits may write an hour
    alert_ignores: int = 1000  # services one alert ignores, all its triggers together
    requests_at_once: int = 4  # requests of the account in flight at once, a trends request counting 2


PLANS: dict[str, Plan] = {
    p.name: p
    for p in (
        Plan(
            "free",
            query_credits=0,
            scan_credits=0,
            monitored_ips=0,
            scan_ips=0,
            paid=False,
            enterprise=False,
            https=False,
            telnet=False,
            facets=5,
            facet_size=100,
            notifiers=10,
            notifier_tests=10,
            saved_queries=20,
            saved_queries_hour=10,
            directory_words=8,
            directory_word_length=64,
            scans_hour=10,
            requests_at_once=2,
        ),
        Plan(
            "member",
            query_credits=100,
            scan_credits=100,
            monitored_ips=16,
            scan_ips=256,
            paid=True,
            enterprise=False,
            https=True,
            telnet=False,
        ),
        Plan(
            "enterprise",
            query_credits=1_000_000,
            scan_credits=65_536,
            monitored_ips=131_072,
            scan_ips=65_536,
            paid=True,
            enterprise=True,
            https=True,
            telnet=True,
            facets=20,
            notifiers=500,
            notifier_tests=100,
            saved_queries=1000,
            saved_queries_hour=60,
            directory_words=32,
            internet_scans=2,
            scans_hour=120,
            alert_networks_hour=524_288,  # four rewrites of a full alert
            alert_ignores=10_000,
        ),
    )
}
