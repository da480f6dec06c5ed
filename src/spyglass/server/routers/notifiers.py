"""Notifiers: ``/notifier...``, where an account's alerts are sent (see spyglass.server.alerts)."""

from __future__ import annotations

import asyncio
import logging
import secrets

from fastapi import APIRouter, Depends, Request

from spyglass.models import Notifier, NotifierCreated, NotifierList, NotifierTest, ProviderSpec, Success
from spyglass.safetext import has_control
from spyglass.server.alerts.delivery import TEST_DEADLINE, DeliveryWorker, TooManyTests
from spyglass.server.alerts.providers import PROVIDERS, DeliveryFailed, Message, check_args
from spyglass.server.alerts.store import DEFAULT_NOTIFIER, AlertStore, NotifierRow
from spyglass.server.auth import Caller, caller, too_many
from spyglass.server.deps import alerts_of, delivery_of
from spyglass.server.errors import bad_request, not_found, responses

router = APIRouter()
log = logging.getLogger("spyglass.alerts")
NOT_ARGS = ("key", "provider", "description")  # form fields that are not provider arguments


def form_body(*, creating: bool) -> dict:
    """The form the route reads itself (its fields depend on the provider), for the OpenAPI document."""
    args = sorted({name for required in PROVIDERS.values() for name in required})
    properties: dict = {name: {"type": "string"} for name in args}
    properties["description"] = {"type": "string"}
    if creating:
        properties["provider"] = {"type": "string", "enum": list(PROVIDERS)}
    schema = {"type": "object", "properties": properties, "required": ["provider"] if creating else []}
    content = {"application/x-www-form-urlencoded": {"schema": schema}}
    return {"requestBody": {"required": creating, "content": content}}


def notifier_store(who: Caller) -> AlertStore:
    store: AlertStore = alerts_of(who.request)
    store.ensure_default(who.account.id, who.account.email)
    return store


def owned_notifier(who: Caller, notifier_id: str) -> NotifierRow:
    """The caller's notifier; 404 for an unknown id and for another account's alike."""
    notifier = notifier_store(who).notifier(who.account.id, notifier_id)
    if notifier is None:
        raise not_found(f"No notifier with id {notifier_id!r}")
    return notifier


def as_model(n: NotifierRow) -> Notifier:
    return Notifier(id=n.id, provider=n.provider, description=n.description, args=n.args)


async def form_fields(request: Request) -> dict[str, str]:
    form = await request.form()
    return {k: v for k, v in form.items() if isinstance(v, str)}


def description_of(fields: dict[str, str]) -> str | None:
    """The form's description (None when empty): shown in lists and logs, so one line of text."""
    description = fields.get("description") or None
    if description is not None and has_control(description):
        raise bad_request("description: control characters (line breaks, tabs, NUL...) are not allowed")
    return description


def provider_args(who: Caller, provider: str, fields: dict[str, str], *, partial: bool = False) -> dict[str, str]:
    wanted = PROVIDERS.get(provider, ())
    extra = sorted(k for k in fields if k not in wanted and k not in NOT_ARGS)
    if extra and provider in PROVIDERS:
        raise bad_request(f"Unknown argument {extra[0]!r} for provider {provider!r}: it takes {', '.join(wanted)}")
    args = {k: v.strip() for k, v in fields.items() if k in wanted}
    try:
        check_args(provider, args, partial=partial, destinations=delivery_of(who.request).destinations)
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    return args


@router.get("/notifier", response_model=NotifierList)
def list_notifiers(who: Caller = Depends(caller)) -> NotifierList:
    matches = [as_model(n) for n in notifier_store(who).notifiers(who.account.id)]
    return NotifierList(matches=matches, total=len(matches))


@router.get("/notifier/provider", response_model=dict[str, ProviderSpec])
def list_providers(who: Caller = Depends(caller)) -> dict[str, ProviderSpec]:
    return {name: ProviderSpec(required=list(required)) for name, required in PROVIDERS.items()}


@router.post(
    "/notifier", response_model=NotifierCreated, responses=responses(400), openapi_extra=form_body(creating=True)
)
async def create_notifier(request: Request, who: Caller = Depends(caller)) -> NotifierCreated:
    fields = await form_fields(request)
    provider = fields.get("provider", "").strip()
    if not provider:
        raise bad_request(f"provider: one of {', '.join(PROVIDERS)} is required")
    args = provider_args(who, provider, fields)
    description = description_of(fields)
    store = await asyncio.to_thread(notifier_store, who)
    notifier_id = await asyncio.to_thread(store.create_notifier, who.account.id, provider, description, args)
    return NotifierCreated(id=notifier_id, success=True)


@router.get("/notifier/{notifier_id}", response_model=Notifier, responses=responses(404))
def get_notifier(notifier_id: str, who: Caller = Depends(caller)) -> Notifier:
    return as_model(owned_notifier(who, notifier_id))


@router.put(
    "/notifier/{notifier_id}",
    response_model=NotifierCreated,
    responses=responses(404),
    openapi_extra=form_body(creating=False),
)
async def edit_notifier(notifier_id: str, request: Request, who: Caller = Depends(caller)) -> NotifierCreated:
    fields = await form_fields(request)
    current = await asyncio.to_thread(owned_notifier, who, notifier_id)
    changed = provider_args(who, current.provider, fields, partial=True)
    description = description_of(fields) if "description" in fields else current.description
    args = {**current.args, **changed}
    store = await asyncio.to_thread(notifier_store, who)
    await asyncio.to_thread(store.update_notifier, who.account.id, notifier_id, description, args)
    return NotifierCreated(id=notifier_id, success=True)


@router.delete("/notifier/{notifier_id}", response_model=Success, responses=responses(404))
def delete_notifier(notifier_id: str, who: Caller = Depends(caller)) -> Success:
    owned_notifier(who, notifier_id)
    if notifier_id == DEFAULT_NOTIFIER:
        raise bad_request("the default notifier cannot be deleted: change its address instead")
    notifier_store(who).delete_notifier(who.account.id, notifier_id)
    return Success(success=True)


@router.post(
    "/notifier/{notifier_id}/test",
    response_model=NotifierTest,
    responses=responses(404, 429),
    summary=f"Send a test notification now and say how it went (within {TEST_DEADLINE:g} s)",
)
async def test_notifier(notifier_id: str, request: Request, who: Caller = Depends(caller)) -> NotifierTest:
    notifier = await asyncio.to_thread(owned_notifier, who, notifier_id)
    worker: DeliveryWorker = delivery_of(request)
    event = f"test:{notifier_id}:{secrets.token_hex(6)}"
    text = f"A test notification from spyglass for the notifier {notifier_id} ({notifier.provider})."
    payload = {"event": event, "test": True, "alert": None, "triggers": [], "service": None}
    msg = Message(event, "[spyglass] test notification", text, payload)
    try:
        detail, ok = await worker.test(notifier, msg), True
    except TooManyTests as exc:
        raise too_many(TEST_DEADLINE, f"{exc}: try again when one has answered") from None
    except DeliveryFailed as exc:
        detail, ok = exc.detail, False
    except Exception:  # never a 500: what went wrong is in the backend's log
        log.exception("the test of notifier %s failed", notifier_id)
        detail, ok = "the delivery failed (an error in spyglass; see the backend's log)", False
    store = await asyncio.to_thread(notifier_store, who)
    outcome = "sent" if ok else "failed"
    await asyncio.to_thread(store.log_test, who.account.id, notifier_id, notifier.provider, event, outcome, detail)
    return NotifierTest(id=notifier_id, success=ok, detail=detail)
