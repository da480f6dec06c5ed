"""Notifiers: ``/notifier...``, where an account's alerts are sent (see spyglass.server.alerts)."""

from __future__ import annotations

import asyncio
import logging
import secrets

from fastapi import APIRouter, Request

from spyglass.models import Notifier, NotifierCreated, NotifierList, NotifierTest, ProviderSpec, Success
from spyglass.safetext import has_control
from spyglass.server.alerts.delivery import TEST_DEADLINE, DeliveryWorker, TooManyTests
from spyglass.server.alerts.providers import PROVIDERS, DeliveryFailed, Message, argument_schema, check_args
from spyglass.server.alerts.testrates import OverTestRate
from spyglass.server.auth import Caller, too_many
from spyglass.server.deps import Alerts, Deliveries, Who
from spyglass.server.errors import ApiError, bad_request, not_found, responses, shown_id
from spyglass.server.state import OverBudget
from spyglass.server.state.alertrows import NotifierRow
from spyglass.server.state.alerts import DEFAULT_NOTIFIER, AlertState

router = APIRouter()
log = logging.getLogger("spyglass.alerts")
NOT_ARGS = ("key", "provider", "description")  # form fields that are not provider arguments
MAX_DESCRIPTION = 200  # characters of a notifier's description (a megabyte of it was stored)


def form_body(*, creating: bool) -> dict:
    """The form the route reads itself, for the OpenAPI document: one set of arguments a provider
    (PROVIDERS), each of them required at creation, none other taken. An edit's form is one of
    them, the notifier's provider's (it names no provider), each argument given replaced."""
    common: dict = {
        "description": {"type": "string", "maxLength": MAX_DESCRIPTION},
        "key": {"type": "string", "description": "the API key, for clients that send it in the form"},
    }
    variants = []
    for provider, names in PROVIDERS.items():
        properties = {**common, **{name: argument_schema(provider, name) for name in names}}
        variant = {"type": "object", "title": provider, "properties": properties, "additionalProperties": False}
        if creating:
            properties["provider"] = {"type": "string", "enum": [provider]}
            variant["required"] = ["provider", *names]
        variants.append(variant)
    schema = {"oneOf": variants} if creating else {"anyOf": variants}
    content = {"application/x-www-form-urlencoded": {"schema": schema}}
    return {"requestBody": {"required": True, "content": content}}


def notifier_store(alerts: AlertState, who: Caller) -> AlertState:
    """The alert store, once it holds the caller's default notifier."""
    alerts.ensure_default(who.account.id, who.account.email)
    return alerts


def owned_notifier(alerts: AlertState, who: Caller, notifier_id: str) -> NotifierRow:
    """The caller's notifier; 404 for an unknown id and for another account's alike."""
    notifier = notifier_store(alerts, who).notifier(who.account.id, notifier_id)
    if notifier is None:
        raise not_found(f"No notifier with id {shown_id(notifier_id)}")
    return notifier


def as_model(n: NotifierRow) -> Notifier:
    return Notifier(id=n.id, provider=n.provider, description=n.description, args=n.args)


async def form_fields(request: Request) -> dict[str, str]:
    """The request's form fields; 415 for a body of another type (JSON was read as no fields, and an
    edit then changed nothing and said it had succeeded)."""
    given = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if given and given not in ("application/x-www-form-urlencoded", "multipart/form-data"):
        raise ApiError(415, f"Unsupported Content-Type {given!r}: send the fields as application/x-www-form-urlencoded")
    form = await request.form()
    return {k: v for k, v in form.items() if isinstance(v, str)}


def description_of(fields: dict[str, str]) -> str | None:
    """The form's description (None when empty): shown in lists and logs, so one line of text."""
    description = fields.get("description") or None
    if description is not None and has_control(description):
        raise bad_request("description: control characters (line breaks, tabs, NUL...) are not allowed")
    if description is not None and len(description) > MAX_DESCRIPTION:
        raise bad_request(f"description: at most {MAX_DESCRIPTION} characters, not {len(description):,}")
    return description


def provider_args(
    deliveries: DeliveryWorker, provider: str, fields: dict[str, str], *, partial: bool = False
) -> dict[str, str]:
    wanted = PROVIDERS.get(provider, ())
    extra = sorted(k for k in fields if k not in wanted and k not in NOT_ARGS)
    if extra and provider in PROVIDERS:
        raise bad_request(f"Unknown argument {extra[0]!r} for provider {provider!r}: it takes {', '.join(wanted)}")
    args = {k: v.strip() for k, v in fields.items() if k in wanted}
    try:
        check_args(provider, args, partial=partial, destinations=deliveries.destinations)
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    return args


@router.get("/notifier", response_model=NotifierList)
def list_notifiers(alerts: Alerts, who: Who) -> NotifierList:
    matches = [as_model(n) for n in notifier_store(alerts, who).notifiers(who.account.id)]
    return NotifierList(matches=matches, total=len(matches))


@router.get("/notifier/provider", response_model=dict[str, ProviderSpec])
def list_providers(who: Who) -> dict[str, ProviderSpec]:
    return {name: ProviderSpec(required=list(required)) for name, required in PROVIDERS.items()}


@router.post(
    "/notifier", response_model=NotifierCreated, responses=responses(400, 403), openapi_extra=form_body(creating=True)
)
async def create_notifier(request: Request, alerts: Alerts, deliveries: Deliveries, who: Who) -> NotifierCreated:
    fields = await form_fields(request)
    provider = fields.get("provider", "").strip()
    if not provider:
        raise bad_request(f"provider: one of {', '.join(PROVIDERS)} is required")
    args = provider_args(deliveries, provider, fields)
    description = description_of(fields)
    store = await asyncio.to_thread(notifier_store, alerts, who)
    plan = who.account.plan
    try:
        notifier_id = await asyncio.to_thread(
            store.create_notifier, who.account.id, provider, description, args, plan.notifiers
        )
    except OverBudget:
        raise ApiError(403, f"Too many notifiers: the {plan.name} plan allows {plan.notifiers}") from None
    return NotifierCreated(id=notifier_id, success=True)


@router.get("/notifier/{notifier_id}", response_model=Notifier, responses=responses(404))
def get_notifier(notifier_id: str, alerts: Alerts, who: Who) -> Notifier:
    return as_model(owned_notifier(alerts, who, notifier_id))


@router.put(
    "/notifier/{notifier_id}",
    response_model=NotifierCreated,
    responses=responses(404),
    openapi_extra=form_body(creating=False),
)
async def edit_notifier(
    notifier_id: str, request: Request, alerts: Alerts, deliveries: Deliveries, who: Who
) -> NotifierCreated:
    fields = await form_fields(request)
    current = await asyncio.to_thread(owned_notifier, alerts, who, notifier_id)
    if not set(fields) - {"key"}:  # (arguments in the query string are not read: the form's fields are)
        wanted = ", ".join(PROVIDERS.get(current.provider, ()))
        raise bad_request(f"Nothing to change: send {wanted} or description as form fields")
    changed = provider_args(deliveries, current.provider, fields, partial=True)
    description = description_of(fields) if "description" in fields else current.description
    args = {**current.args, **changed}
    await asyncio.to_thread(alerts.update_notifier, who.account.id, notifier_id, description, args)
    return NotifierCreated(id=notifier_id, success=True)


@router.delete("/notifier/{notifier_id}", response_model=Success, responses=responses(404))
def delete_notifier(notifier_id: str, alerts: Alerts, who: Who) -> Success:
    owned_notifier(alerts, who, notifier_id)
    if notifier_id == DEFAULT_NOTIFIER:
        raise bad_request("the default notifier cannot be deleted: change its address instead")
    alerts.delete_notifier(who.account.id, notifier_id)
    return Success(success=True)


@router.post(
    "/notifier/{notifier_id}/test",
    response_model=NotifierTest,
    responses=responses(404, 429),
    summary=f"Send a test notification now and say how it went (within {TEST_DEADLINE:g} s)",
)
async def test_notifier(notifier_id: str, alerts: Alerts, deliveries: Deliveries, who: Who) -> NotifierTest:
    notifier = await asyncio.to_thread(owned_notifier, alerts, who, notifier_id)
    event = f"test:{notifier_id}:{secrets.token_hex(6)}"
    text = f"A test notification from spyglass for the notifier {notifier_id} ({notifier.provider})."
    payload = {"event": event, "test": True, "alert": None, "triggers": [], "service": None}
    msg = Message(event, "[spyglass] test notification", text, payload)
    try:
        detail, ok = await deliveries.test(notifier, msg, who.account.plan), True
    except OverTestRate as exc:
        raise too_many(exc.wait, str(exc)) from None
    except TooManyTests as exc:
        raise too_many(TEST_DEADLINE, f"{exc}: try again when one has answered") from None
    except DeliveryFailed as exc:
        detail, ok = exc.detail, False
    except Exception:  # never a 500: what went wrong is in the backend's log
        log.exception("the test of notifier %s failed", notifier_id)
        detail, ok = "the delivery failed (an error in spyglass; see the backend's log)", False
    outcome = "sent" if ok else "failed"
    await asyncio.to_thread(alerts.log_test, who.account.id, notifier_id, notifier.provider, event, outcome, detail)
    return NotifierTest(id=notifier_id, success=ok, detail=detail)
