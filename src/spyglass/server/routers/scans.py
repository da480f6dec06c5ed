"""On-demand scanning: ``/{ns}/ports``, ``/protocols``, ``/scan``, ``/scan/internet``, ``/scans``,
``/scan/{id}``. Every refusal happens before anything is charged or any packet leaves."""

from __future__ import annotations

import ipaddress
from typing import Literal

from fastapi import APIRouter, Form, Query

from spyglass.models import ScanList, ScanStatus, ScanSubmission
from spyglass.netblocks import Network
from spyglass.netools.scantargets import BadTargets, NotAllowed, ScanSpec, check_allowed, parse_ips
from spyglass.netools.targets import NETWORK_PATTERN
from spyglass.server.auth import Caller, too_many
from spyglass.server.deps import AppSettings, Charge, Scans, Who
from spyglass.server.errors import ApiError, bad_request, not_found, responses, shown_id
from spyglass.server.scanner.protocols import PORTS, PROTOCOLS
from spyglass.server.settings import Settings
from spyglass.server.state import OverBudget
from spyglass.server.state.accounts import key_digest
from spyglass.server.state.scans import CANCELLED, DONE, KEPT, PAGE, Scan, ScanState, ScansThisHour

router = APIRouter()
MAX_PAGE = 10_000  # far past the last page of any account (it keeps about KEPT scans)


def allowed_networks(settings: Settings) -> list[Network]:
    return [ipaddress.ip_network(n, strict=False) for n in settings.scan_allow]


@router.get("/ports", response_model=list[int], summary="Ports the crawler looks for")
def ports(who: Who) -> list[int]:
    return sorted(PORTS)


@router.get("/protocols", response_model=dict[str, str], summary="Protocols the crawler speaks")
def protocols(who: Who) -> dict[str, str]:
    return dict(sorted(PROTOCOLS.items()))


# What parse_ips reads: a comma list of addresses and netblocks, or a JSON object (whose grammar,
# and which networks this backend may scan, a setting, the description says).
IPS_PATTERN = rf"^\s*(?:{NETWORK_PATTERN}\s*(?:,\s*{NETWORK_PATTERN}\s*)*|\{{[\s\S]*)$"
IPS_DESCRIPTION = (
    "IPs and CIDR netblocks, comma-separated, or a JSON object mapping each to [port, protocol] pairs "
    "(protocols: GET /{namespace}/protocols); only networks the backend may scan (serve --scan-allow)"
)


@router.post(
    "/scan",
    response_model=ScanSubmission,
    summary="Scan IPs or netblocks (1 scan credit per IP)",
    responses=responses(402, 403),
)
def submit(
    scans: Scans,
    settings: AppSettings,
    charge: Charge,
    who: Who,
    ips: str = Form(..., description=IPS_DESCRIPTION, json_schema_extra={"pattern": IPS_PATTERN}),
) -> dict:
    who.require_paid("On-demand scanning")
    try:
        spec = parse_ips(ips, PROTOCOLS)
        check_allowed(spec, allowed_networks(settings))
    except BadTargets as exc:
        raise bad_request(f"Invalid 'ips': {exc}") from None
    except NotAllowed as exc:  # a target this backend cannot take, not a plan's limit
        raise bad_request(str(exc)) from None
    count = spec.addresses()
    limit = min(who.account.plan.scan_ips, settings.scan_max_ips)
    if count > limit:
        raise bad_request(f"The scan covers {count:,} addresses; at most {limit:,} may be scanned in one request")
    hourly_room(scans.store, who)  # before credits are spent
    account = charge(scan=count)  # 402 and nothing spent when short
    try:
        scan = create(scans.store, who, spec, count)
    except ApiError:  # past the scans an hour since hourly_room: a create at once took the room
        charge(scan=-count)
        raise
    scans.store.set_credits_left(scan.id, account.scan_credits)
    scans.submit(scan)
    return {"id": scan.id, "count": count, "credits_left": account.scan_credits}


@router.post(
    "/scan/internet",
    response_model=ScanSubmission,
    summary="Scan every allowed network on one port (researchers and enterprise)",
    responses=responses(400, 403),
)
def internet(
    scans: Scans,
    settings: AppSettings,
    who: Who,
    port: int = Form(..., ge=1, le=65535),
    protocol: Literal[tuple(sorted(PROTOCOLS))] = Form(...),  # type: ignore[valid-type]
) -> dict:
    if not (who.account.researcher or who.account.plan.enterprise):
        raise ApiError(403, "Internet-wide scans are for approved researchers and enterprise data licenses")
    if protocol not in PROTOCOLS:
        raise bad_request(f"Unknown protocol {protocol!r}: one of {', '.join(sorted(PROTOCOLS))}")
    # Every network the operator allows, however large (the default, loopback, is 16,777,217
    # addresses): --scan-max-ips bounds what one /scan request may ask for, and a request here asks
    # for no addresses. One port, a bare connect for each closed one; it runs in the background.
    networks = [str(n) for n in allowed_networks(settings)]
    if not networks:  # (a backend listening beyond loopback, told of none)
        raise bad_request(
            "This backend may scan no network: its operator allows some with SPYGLASS_SCAN_ALLOW=CIDR,... "
            "or 'spyglass serve --scan-allow CIDR'"
        )
    spec = ScanSpec(services={n: [(port, protocol)] for n in networks})
    plan = who.account.plan
    try:
        scan = create(scans.store, who, spec, spec.addresses(), internet=True, most=plan.internet_scans)
    except OverBudget:
        raise ApiError(
            403,
            f"Too many internet scans under way: the {plan.name} plan allows {plan.internet_scans} at once"
            f" (cancel one with DELETE /{settings.namespace}/scan/ID, or wait for it to finish)",
        ) from None
    scans.submit(scan)
    return {"id": scan.id}


def create(
    store: ScanState, who: Caller, spec: ScanSpec, count: int, internet: bool = False, most: int | None = None
) -> Scan:
    """The scan, counted against the plan's scans an hour (and ``most``) as it is written: 429 past them."""
    try:
        return store.create(
            account_id=who.account.id,
            api_key=key_digest(who.key),
            size=count,
            spec=spec.to_json(),
            probes=spec.probe_count(len(PORTS)),
            internet=internet,
            most=most,
            per_hour=who.account.plan.scans_hour,
        )
    except ScansThisHour as exc:
        raise over_hourly(who, exc) from None


def hourly_room(store: ScanState, who: Caller) -> None:
    try:
        store.hourly_room(who.account.id, who.account.plan.scans_hour)
    except ScansThisHour as exc:
        raise over_hourly(who, exc) from None


def over_hourly(who: Caller, exc: ScansThisHour) -> ApiError:
    plan = who.account.plan
    cap = f"the {plan.name} plan allows {plan.scans_hour} scans started an hour"
    return too_many(exc.wait, f"Too many scans started in the last hour: {cap}")


@router.delete(
    "/scan/{scan_id}",
    response_model=ScanStatus,
    summary="Cancel a scan (beyond the seed): it stops, keeps what it found, and is not resumed",
    responses=responses(400, 404),
)
def cancel(scan_id: str, scans: Scans, who: Who) -> dict:
    scan = scans.store.get(scan_id)
    if scan is None or scan.account_id != who.account.id:
        raise not_found(f"No scan with id {shown_id(scan_id)}")
    if scan.status == DONE:
        raise bad_request(f"The scan {scan_id} is done already: there is nothing to cancel")
    if scan.status != CANCELLED:
        scans.cancel(scan_id)
    cancelled = scans.store.get(scan_id)
    assert cancelled is not None
    return cancelled.status_body()


@router.get("/scans", response_model=ScanList, summary=f"Your scans, newest first, {PAGE} a page")
def listing(
    scans: Scans,
    who: Who,
    page: int = Query(
        1, ge=1, le=MAX_PAGE, description=f"{PAGE} a page; the latest {KEPT:,} are kept, and all unfinished"
    ),
) -> dict:
    found, total = scans.store.of_account(who.account.id, page)
    return {"matches": [s.listing_item(who.key) for s in found], "total": total}


@router.get("/scan/{scan_id}", response_model=ScanStatus, summary="One scan's status", responses=responses(404))
def status(scan_id: str, scans: Scans, who: Who) -> dict:
    scan = scans.store.get(scan_id)
    if scan is None or scan.account_id != who.account.id:  # another account's scan is no business of this one
        raise not_found(f"No scan with id {shown_id(scan_id)}")
    return scan.status_body()
