"""Network alerts: ``/{ns}/alert...`` over ``alerts.db`` (see spyglass.server.alerts)."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request

from spyglass.coverage import covers
from spyglass.models import Alert, AlertFilters, Attached, Notification, Success, Trigger
from spyglass.netools.targets import NETWORK_PATTERN
from spyglass.safetext import NOT_BLANK_PATTERN, has_control
from spyglass.server.alerts.bodies import NO_FILTERS, BodyReader, ReadBody
from spyglass.server.alerts.engine import parse_service
from spyglass.server.alerts.providers import cannot_deliver
from spyglass.server.alerts.service import NOTIFYING, notify_reason, over_plan
from spyglass.server.alerts.triggers import NAMES_PATTERN, TRIGGERS, UnknownTrigger, parse_names
from spyglass.server.auth import Caller, Hourly, too_many
from spyglass.server.deps import AlertBodies, Alerts, PerHour, Who
from spyglass.server.errors import ApiError, bad_request, not_found, responses, shown_id
from spyglass.server.gates import one_at_a_time
from spyglass.server.routers.notifiers import owned_notifier
from spyglass.server.state import OverBudget
from spyglass.server.state.accounts import iso
from spyglass.server.state.alertrows import AlertRow, NotifierRow
from spyglass.server.state.alerts import AlertState, StoredNetworks

router = APIRouter()

_NETWORK = {"type": "string", "pattern": rf"^\s*{NETWORK_PATTERN}\s*$"}  # (spaces around it are dropped)
_FILTERS = {
    "type": "object",
    "properties": {
        "ip": {
            # one string is a list of one, as the original service's library may send it
            "anyOf": [{"type": "array", "items": _NETWORK, "minItems": 1}, _NETWORK],
            "description": "IPs and CIDR ranges",
        }
    },
    "required": ["ip"],
}
LOG_MOST = 1_000  # delivery attempts one look at an alert's log lists (about a search page's work)
MAX_NAME = 200  # characters of an alert's name (it was cut there silently, 15 MB of it read first)
_NAME = {"type": "string", "minLength": 1, "maxLength": MAX_NAME, "pattern": NOT_BLANK_PATTERN}
MAX_EXPIRES = 10 * 365 * 86400  # ten years (0 is never); 300 billion seconds would pass the year 9999
_EXPIRES = {
    "type": ["integer", "null"],  # null: as if not given
    "minimum": 0,
    "maximum": MAX_EXPIRES,
    "description": "seconds; 0 never expires",
}


def json_only(request: Request) -> None:
    """415 for a body its Content-Type says is no JSON in UTF-8 (text/plain, a form, UTF-16): it
    was read as JSON all the same. None given stays taken (as clients of the original service
    may send it; its own library says application/json)."""
    given = request.headers.get("content-type") or ""
    media, *params = given.split(";")
    media = media.strip().lower()
    pairs = (p.partition("=") for p in params)
    charsets = [v.strip().strip('"').lower() for k, _, v in pairs if k.strip().lower() == "charset"]
    json = media in ("", "application/json") or (media.startswith("application/") and media.endswith("+json"))
    if not json or any(c not in ("utf-8", "utf8") for c in charsets):
        raise ApiError(415, f"Unsupported Content-Type {given!r}: send the body as application/json in UTF-8")


def json_body(properties: dict, required: list[str]) -> dict[str, Any]:
    """What a route that reads a JSON body itself (for clearer errors than a model's) declares:
    the body, for the API document, and :func:`json_only`."""
    schema = {"type": "object", "properties": properties, "required": required}
    body = {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}
    return {"openapi_extra": body, "dependencies": [Depends(json_only)]}


def owned(alerts: AlertState, who: Caller, alert_id: str) -> AlertRow:
    """The caller's alert; 404 for an unknown id and for another account's alert alike."""
    alert = alerts.alert(who.account.id, alert_id)
    if alert is None:
        raise not_found(f"No alert with id {shown_id(alert_id)}")
    return alert


def networks_of(read: ReadBody) -> StoredNetworks:
    """The body's networks as the state keeps them; a 400 that says why where they cannot be."""
    if not isinstance(read.networks, StoredNetworks):
        raise bad_request(read.networks or NO_FILTERS)
    return read.networks


async def spend_networks(request: Request, hourly: Hourly, who: Caller, bodies: BodyReader) -> ReadBody:
    """The body of a create or edit, once the plan's alert networks an hour are spent on it: a
    write of a large alert is costly, and edits again and again slowed every account. Once the
    hour's are spent, the body is not even decoded (an alert's list can be megabytes, sent again
    on every retry); one whose networks the hour cannot pay for is counted, not parsed; a large one
    is read in a process of its own (see alerts/bodies.py), a small one in a thread."""
    plan, name = who.account.plan, f"account {who.account.id}"
    cap = f"the {plan.name} plan allows {plan.alert_networks_hour:,} alert networks written an hour"
    if (wait := hourly.spend(name, plan.alert_networks_hour, spend=False)) is not None:
        raise too_many(wait, f"Too many alert networks written: {cap}")
    raw = await request.body()
    read = await bodies.read(raw, hourly.left(name, plan.alert_networks_hour))
    if read.not_json is not None:
        raise bad_request(f"Invalid request: the body is not JSON ({read.not_json})")
    if read.count > plan.alert_networks_hour:
        raise ApiError(403, f"Too many networks in one alert: {cap}")
    if (wait := hourly.spend(name, plan.alert_networks_hour, read.count)) is not None:
        raise too_many(wait, f"Too many alert networks written: {cap}")
    if read.networks is None:  # the hour gave back enough while it was read: parsed now
        read = await bodies.read(raw, read.count)
    return read


def expires_of(body: dict[str, Any]) -> int | None:
    """``expires`` of a create or edit body (None if not given): seconds after the alert's
    creation, 0 for never."""
    expires = body.get("expires")
    if expires is None:
        return None
    if isinstance(expires, float) and expires.is_integer():  # 60.0 is an integer to JSON (and its schema)
        expires = int(expires)
    if isinstance(expires, bool) or not isinstance(expires, int) or not 0 <= expires <= MAX_EXPIRES:
        raise bad_request(f"expires: a whole number of seconds from 0 (never) to {MAX_EXPIRES} (ten years) is required")
    return expires


@contextmanager
def within_plan(who: Caller, networks: StoredNetworks) -> Iterator[None]:
    """Around a create or edit given the plan's budget: its OverBudget as a 403 that says why."""
    try:
        yield
    except OverBudget as exc:
        raise ApiError(403, over_plan(who.account, networks.size, exc)) from None


def alert_body(
    alerts: AlertState,
    who: Caller,
    alert: AlertRow,
    info: bool = False,
    known: dict[str, NotifierRow] | None = None,
    now: datetime | None = None,
) -> Alert:
    """The alert as the API shows it; ``info``: with its notifiers (``known``: the account's, read
    once for a list of alerts, not once an alert: 23,000 alerts' list took 1.9 s) and its state."""
    now = now or alerts.clock()
    end = alert.expiration()
    body = Alert(
        id=alert.id,
        name=alert.name,
        created=alert.created,
        filters=AlertFilters(ip=alert.networks),
        size=alert.size,
        expires=alert.expires,
        expiration=iso(end) if end else None,
        expired=alert.expired(now),
        triggers={t: {"ignore": alert.ignores.get(t, [])} for t in alert.triggers},
        has_triggers=bool(alert.triggers),
    )
    if info:
        notifiers = [known.get(n) if known is not None else alerts.notifier(who.account.id, n) for n in alert.notifiers]
        body.notifiers = [
            {"id": n.id, "provider": n.provider, "description": n.description, "args": n.args} for n in notifiers if n
        ]
        failing = [f"{n.id}: {why}" for n in notifiers if n and (why := cannot_deliver(n.provider, n.args))]
        reason = notify_reason(alert, now, len(body.notifiers), failing)
        body.notify = {"active": reason.startswith(NOTIFYING), "reason": reason}
    return body


# Documented, not enforced: the routes' own check says which names exist (after the alert's 404).
TriggerNames = Annotated[
    str,
    Path(
        description="trigger names, comma-separated (GET /alert/triggers)", json_schema_extra={"pattern": NAMES_PATTERN}
    ),
]
TriggerName = Annotated[
    str, Path(description="a trigger's name (GET /alert/triggers)", json_schema_extra={"enum": list(TRIGGERS)})
]


def trigger_names(text: str) -> list[str]:
    try:
        return parse_names(text)
    except UnknownTrigger as exc:
        raise bad_request(str(exc)) from None


@router.post(
    "/alert",
    response_model=Alert,
    response_model_exclude_unset=True,
    responses=responses(400, 403, 429),
    **json_body({"name": _NAME, "filters": _FILTERS, "expires": _EXPIRES}, ["name", "filters"]),
)
async def create_alert(request: Request, alerts: Alerts, hourly: PerHour, bodies: AlertBodies, who: Who) -> Alert:
    read = await spend_networks(request, hourly, who, bodies)
    async with one_at_a_time(("alerts", who.account.id)):  # the others wait holding no thread
        return await asyncio.to_thread(_create_alert, read, alerts, who)


def _create_alert(read: ReadBody, alerts: AlertState, who: Caller) -> Alert:
    body = read.fields
    if body is None:
        raise bad_request("a JSON object with 'name' and 'filters' is required")
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise bad_request("name: a non-empty string is required")
    if has_control(name):
        raise bad_request("name: control characters (line breaks, tabs, NUL...) are not allowed")
    if len(name) > MAX_NAME:
        raise bad_request(f"name: at most {MAX_NAME} characters, not {len(name):,}")
    expires = expires_of(body) or 0
    networks = networks_of(read)
    with within_plan(who, networks):
        alert = alerts.create_alert(who.account.id, name.strip(), networks, expires, who.account.plan.monitored_ips)
    return alert_body(alerts, who, alert)


@router.get("/alert/info", response_model=list[Alert], response_model_exclude_unset=True)
def list_alerts(alerts: Alerts, who: Who) -> list[Alert]:
    known, now = {n.id: n for n in alerts.notifiers(who.account.id)}, alerts.clock()
    return [alert_body(alerts, who, a, True, known, now) for a in alerts.alerts(who.account.id)]


@router.get("/alert/triggers", response_model=list[Trigger])
def list_triggers(who: Who) -> list[Trigger]:
    return [Trigger(name=t.name, rule=t.rule, description=t.description) for t in TRIGGERS.values()]


@router.get("/alert/{alert_id}/info", response_model=Alert, response_model_exclude_unset=True, responses=responses(404))
def alert_info(alert_id: str, alerts: Alerts, who: Who) -> Alert:
    return alert_body(alerts, who, owned(alerts, who, alert_id), info=True)


@router.post(
    "/alert/{alert_id}",
    response_model=Alert,
    response_model_exclude_unset=True,
    responses=responses(400, 403, 404, 429),
    **json_body({"filters": _FILTERS, "expires": _EXPIRES}, ["filters"]),
)
async def edit_alert(
    alert_id: str, request: Request, alerts: Alerts, hourly: PerHour, bodies: AlertBodies, who: Who
) -> Alert:
    read = await spend_networks(request, hourly, who, bodies)
    async with one_at_a_time(("alerts", who.account.id)):
        return await asyncio.to_thread(_edit_alert, alert_id, read, alerts, who)


def _edit_alert(alert_id: str, read: ReadBody, alerts: AlertState, who: Caller) -> Alert:
    owned(alerts, who, alert_id)
    networks = networks_of(read)
    expires = expires_of(read.fields or {})
    with within_plan(who, networks):
        alerts.set_networks(who.account.id, alert_id, networks, expires, who.account.plan.monitored_ips)
    return alert_body(alerts, who, owned(alerts, who, alert_id))


@router.delete("/alert/{alert_id}", response_model=Success, responses=responses(404))
def delete_alert(alert_id: str, alerts: Alerts, who: Who) -> Success:
    if not alerts.delete_alert(who.account.id, alert_id):
        raise not_found(f"No alert with id {shown_id(alert_id)}")
    return Success(success=True)


@router.put("/alert/{alert_id}/trigger/{trigger}", response_model=Success, responses=responses(404))
def enable_triggers(alert_id: str, trigger: TriggerNames, alerts: Alerts, who: Who) -> Success:
    owned(alerts, who, alert_id)
    alerts.set_triggers(alert_id, trigger_names(trigger), True)
    return Success(success=True)


@router.delete("/alert/{alert_id}/trigger/{trigger}", response_model=Success, responses=responses(404))
def disable_triggers(alert_id: str, trigger: TriggerNames, alerts: Alerts, who: Who) -> Success:
    owned(alerts, who, alert_id)
    alerts.set_triggers(alert_id, trigger_names(trigger), False)
    return Success(success=True)


def _ignore(alerts: AlertState, who: Caller, alert_id: str, trigger: str, service: str, ignored: bool) -> Success:
    alert = owned(alerts, who, alert_id)
    names = trigger_names(trigger)
    if len(names) != 1:
        raise bad_request("trigger: give one trigger name")
    try:
        written = parse_service(service)
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    ip = ipaddress.ip_address(written.rpartition(":")[0].strip("[]"))
    # Un-ignoring stays possible after the networks changed; ignoring a service the alert never
    # watches would silently do nothing.
    if ignored and not covers(alert.ranges(), ip):
        raise bad_request(f"{written} is outside the alert's networks ({', '.join(alert.networks)}): nothing to ignore")
    plan = who.account.plan
    try:
        alerts.set_ignored(alert_id, names[0], written, ignored, most=plan.alert_ignores)
    except OverBudget:
        cap = f"the {plan.name} plan allows {plan.alert_ignores:,}"
        raise ApiError(403, f"Too many ignored services in one alert: {cap}") from None
    return Success(success=True)


@router.put(
    "/alert/{alert_id}/trigger/{trigger}/ignore/{service}", response_model=Success, responses=responses(403, 404)
)
def ignore_service(alert_id: str, trigger: TriggerName, service: str, alerts: Alerts, who: Who) -> Success:
    return _ignore(alerts, who, alert_id, trigger, service, True)


@router.delete("/alert/{alert_id}/trigger/{trigger}/ignore/{service}", response_model=Success, responses=responses(404))
def unignore_service(alert_id: str, trigger: TriggerName, service: str, alerts: Alerts, who: Who) -> Success:
    return _ignore(alerts, who, alert_id, trigger, service, False)


def _attach(alerts: AlertState, who: Caller, alert_id: str, notifier_id: str, attached: bool) -> Attached:
    owned(alerts, who, alert_id)
    notifier = owned_notifier(alerts, who, notifier_id)
    alerts.set_attached(alert_id, notifier_id, attached)
    # Attached all the same (its 'to' may come later), but said now rather than at the first delivery.
    problem = cannot_deliver(notifier.provider, notifier.args) if attached else None
    return Attached(success=True, warning=f"notifier {notifier_id} cannot deliver: {problem}" if problem else None)


@router.put(
    "/alert/{alert_id}/notifier/{notifier_id}",
    response_model=Attached,
    response_model_exclude_none=True,
    responses=responses(404),
)
def attach_notifier(alert_id: str, notifier_id: str, alerts: Alerts, who: Who) -> Attached:
    return _attach(alerts, who, alert_id, notifier_id, True)


@router.delete(
    "/alert/{alert_id}/notifier/{notifier_id}",
    response_model=Attached,
    response_model_exclude_none=True,
    responses=responses(404),
)
def detach_notifier(alert_id: str, notifier_id: str, alerts: Alerts, who: Who) -> Attached:
    return _attach(alerts, who, alert_id, notifier_id, False)


@router.get(
    "/alert/{alert_id}/notifications",
    response_model=list[Notification],
    responses=responses(404),
    summary="Recent delivery attempts of the alert's notifications (newest first)",
)
def alert_notifications(
    alerts: Alerts,
    who: Who,
    alert_id: str,
    limit: int = Query(50, ge=1, le=LOG_MOST, description=f"how many attempts, the newest (at most {LOG_MOST:,})"),
) -> list[dict]:
    owned(alerts, who, alert_id)
    return alerts.log(who.account.id, alert_id, limit)
