"""Notifier providers: the arguments each requires and how each one really delivers.

Base URLs of the hosted services come from ``Settings.notifier_urls`` (``spyglass serve
--notifier-url PROVIDER=URL``), so tests and offline users point them at loopback; e-mail goes
through ``Settings.smtp_server``. A delivery either succeeds, or raises :class:`DeliveryFailed`
saying whether trying again later may help.
"""

from __future__ import annotations

import logging
import re
import smtplib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

import httpx

from spyglass.safetext import has_control
from spyglass.server import mail
from spyglass.server.alerts.destinations import Destinations, Refused
from spyglass.server.outbound import tls

PROVIDERS: dict[str, tuple[str, ...]] = {
    "email": ("to",),
    "gitter": ("room_id", "token"),
    "pagerduty": ("routing_key",),
    "phone": ("to",),
    "slack": ("webhook_url",),
    "telegram": ("chat_id", "token"),
    "webhook": ("url",),
}
DEFAULT_URLS = {
    "gitter": "https://api.gitter.im",
    "pagerduty": "https://events.pagerduty.com",
    "slack": "https://hooks.slack.com",
    "telegram": "https://api.telegram.org",
    # phone: an SMS HTTP gateway has no public default; configure one with --notifier-url phone=URL
}
log = logging.getLogger("spyglass.alerts")

TIMEOUT = 10.0
Admit = Callable[[str], Awaitable[None]]  # awaited with the address:port a chosen URL is sent to; may raise
_PHONE = re.compile(r"^\+?[0-9][0-9 ()-]{4,30}$")
_EMAIL = re.compile(r"^[^\s@<>()\[\],;:\\\"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")
_TOKEN = re.compile(r"^[A-Za-z0-9._:~+/=-]+$")  # tokens, routing keys, room ids: no spaces, nothing to escape
_CHAT = re.compile(r"^(-?[0-9]{1,20}|@[A-Za-z0-9_]{5,32})$")  # Telegram: a chat's number or a channel's @name
MAX_LENGTH = {"url": 2048, "webhook_url": 2048, "to": 254, "token": 256, "routing_key": 64, "chat_id": 33}


_URL = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\s/?#]+[^\s]*$"  # what _is_http_url takes, with no spaces


def argument_schema(provider: str, name: str) -> dict:
    """One argument of ``provider`` as the API document says it: its form and length. check_args has
    the last word (no control characters, no '.' segments, a URL's destination)."""
    pattern = {"url": _URL, "webhook_url": _URL, "chat_id": _CHAT.pattern}.get(name)
    if name in ("token", "routing_key", "room_id"):
        pattern = _TOKEN.pattern
    elif provider == "email":
        pattern = _EMAIL.pattern
    elif provider == "phone":
        pattern = _PHONE.pattern
    return {"type": "string", "minLength": 1, "maxLength": MAX_LENGTH.get(name, 128), "pattern": pattern}


class DeliveryFailed(Exception):
    def __init__(self, detail: str, retry: bool) -> None:
        super().__init__(detail)
        self.detail, self.retry = detail, retry


@dataclass(frozen=True)
class Message:
    event: str  # the idempotency key: one per (alert, banner); receivers may drop repeats by it
    subject: str
    text: str
    payload: dict  # the JSON a webhook receives


def check_args(
    provider: str, args: dict[str, str], *, partial: bool = False, destinations: Destinations | None = None
) -> None:
    """ValueError naming the first missing or malformed argument (every one is sent somewhere: no
    control characters, nothing past its length, the form its provider needs); with
    ``destinations``, a URL that names an address notifications may not reach."""
    if provider not in PROVIDERS:
        raise ValueError(f"Unknown provider {provider!r}: the providers are {', '.join(PROVIDERS)}")
    for name in PROVIDERS[provider]:
        value = args.get(name)
        if value is None and partial:
            continue
        if not value or not value.strip():
            raise ValueError(f"Missing required argument {name!r} for provider {provider!r}")
        if has_control(value):
            raise ValueError(f"{name}: control characters (line breaks, tabs...) are not allowed")
        if len(value) > MAX_LENGTH.get(name, 128):
            raise ValueError(f"{name}: at most {MAX_LENGTH.get(name, 128)} characters")
        if name != "url" and _climbs(urlsplit(value).path if name == "webhook_url" else value):
            raise ValueError(f"{name}: '.' and '..' path segments are not allowed")
        if name in ("url", "webhook_url"):
            if not _is_http_url(value) or " " in value:
                raise ValueError(f"{name}: an http:// or https:// URL is needed, not {value!r}")
            if destinations is not None:
                try:
                    destinations.check_literal(value)
                except Refused as exc:
                    raise ValueError(f"{name}: {exc}") from None
        elif provider == "email" and not _EMAIL.match(value):
            raise ValueError(f"to: an e-mail address is needed, not {value!r}")
        elif provider == "phone" and not _PHONE.match(value):
            raise ValueError(f"to: a phone number is needed, not {value!r}")
        elif name == "chat_id" and not _CHAT.match(value):
            raise ValueError(f"chat_id: a chat's number or a channel's @name is needed, not {value!r}")
        elif name in ("token", "routing_key", "room_id") and not _TOKEN.match(value):
            raise ValueError(f"{name}: letters, digits and . _ : ~ + / = - only")


def _climbs(path: str) -> bool:
    """Whether ``path`` has a ``.`` or ``..`` segment (percent-encoded too): appended to a gateway's
    base URL, it would reach another path of the gateway's host."""
    return any(segment in (".", "..") for segment in unquote(path).replace("\\", "/").split("/"))


def _segment(value: str) -> str:
    """An argument as one path segment of a gateway's URL: ``/``, ``?``, ``#`` and ``%`` encoded."""
    return quote(value, safe=":~+=")


def _is_http_url(value: str) -> bool:
    """An http(s) URL with a host, and a port from 1 to 65535 if it names one."""
    parts = urlsplit(value)
    try:
        port = parts.port  # (ValueError past 65535)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and port != 0


def base_url(provider: str, urls: dict[str, str]) -> str:
    base = urls.get(provider) or DEFAULT_URLS.get(provider)
    if not base:
        raise DeliveryFailed(
            f"no {provider} gateway is configured (spyglass serve --notifier-url {provider}=URL)", retry=True
        )
    return base.rstrip("/")


async def deliver(
    provider: str,
    args: dict[str, str],
    msg: Message,
    urls: dict[str, str],
    smtp: tuple[str, int] | None,
    destinations: Destinations,
    admit: Admit | None = None,
) -> str:
    """Send ``msg`` through the provider; returns a short description of the answer.

    The URLs an account gives (webhook, Slack's webhook_url) go only where ``destinations``
    permits, and a failure there says only that the delivery failed: what answered, or did not,
    at an address an account chose is not for it to learn. The gateways the operator configured
    (``--notifier-url``) are trusted and their answers told. ``admit`` is called with the address
    and port a URL the account gave is sent to, once checked and before anything is sent, and may
    raise to send nothing (a budget by destination: see :func:`contacts_chosen`)."""
    if provider == "email":
        return await _email(args, msg, smtp)
    headers = {"Idempotency-Key": msg.event}
    if provider == "webhook":
        return await _post_to_chosen(args["url"], msg.payload, headers, destinations, admit)
    if provider == "slack":
        url = args["webhook_url"]
        if "slack" not in urls:
            return await _post_to_chosen(url, {"text": msg.text}, headers, destinations, admit)
        parts = urlsplit(url)  # the configured host receives the webhook's path (tests: loopback)
        if _climbs(parts.path):  # stored before arguments were checked
            raise DeliveryFailed("webhook_url: '.' and '..' path segments are not allowed", retry=False)
        url = base_url("slack", urls) + parts.path + (f"?{parts.query}" if parts.query else "")
        return await _post(url, {"text": msg.text}, headers)
    if provider == "pagerduty":
        body = {
            "routing_key": args["routing_key"],
            "event_action": "trigger",
            "dedup_key": msg.event,
            "payload": {
                "summary": msg.subject,
                "source": msg.payload.get("service") or "spyglass",
                "severity": "warning",
                "custom_details": msg.payload,
            },
        }
        return await _post(base_url("pagerduty", urls) + "/v2/enqueue", body, headers)
    if provider == "telegram":
        url = f"{base_url('telegram', urls)}/bot{_segment(args['token'])}/sendMessage"
        return await _post(url, {"chat_id": args["chat_id"], "text": msg.text}, headers)
    if provider == "gitter":
        url = f"{base_url('gitter', urls)}/v1/rooms/{_segment(args['room_id'])}/chatMessages"
        return await _post(url, {"text": msg.text}, {**headers, "Authorization": f"Bearer {args['token']}"})
    if provider == "phone":
        return await _post(base_url("phone", urls), {"to": args["to"], "text": msg.subject}, headers)
    raise DeliveryFailed(f"unknown provider {provider!r}", retry=False)


def contacts_chosen(provider: str, urls: dict[str, str]) -> bool:
    """Whether the provider sends to a URL the account gave (so :func:`deliver` calls ``admit``)."""
    return provider == "webhook" or (provider == "slack" and "slack" not in urls)


# What an account is told of a failed send to a URL it gave (what answered there, or did not, is not
# for it to learn: a probe of the operator's networks).
UNTOLD = "the delivery failed (no answer it accepted; what the URL answered is not told to an account)"


async def _post_to_chosen(
    url: str, body: dict, headers: dict[str, str], destinations: Destinations, admit: Admit | None
) -> str:
    try:
        pinned = await destinations.pin(url)
    except Refused as exc:
        raise DeliveryFailed(f"not sent: {exc}", retry=exc.retry) from None
    if admit is not None:
        await admit(pinned.contacted)
    try:
        return await _post(
            pinned.url,
            body,
            {**headers, "Host": pinned.host},
            auth=pinned.auth,
            extensions={"sni_hostname": urlsplit(url).hostname or ""},
        )
    except DeliveryFailed as exc:
        log.info("a delivery to %s failed: %s", pinned.host, exc.detail)  # for the operator, not the account
        raise DeliveryFailed(UNTOLD, retry=exc.retry) from None


async def _post(
    url: str, body: dict, headers: dict[str, str], auth: tuple[str, str] | None = None, extensions: dict | None = None
) -> str:
    try:
        async with httpx.AsyncClient(
            timeout=TIMEOUT, follow_redirects=False, trust_env=False, verify=tls(trust_env=False)
        ) as http:
            answer = await http.post(
                url, json=body, headers=headers, auth=auth or httpx.USE_CLIENT_DEFAULT, extensions=extensions
            )
    except httpx.HTTPError as exc:
        raise DeliveryFailed(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__, retry=True) from None
    if answer.is_success:
        return f"HTTP {answer.status_code}"
    retry = answer.status_code >= 500 or answer.status_code in (408, 429)
    raise DeliveryFailed(f"HTTP {answer.status_code} {answer.reason_phrase}".strip(), retry=retry)


def cannot_deliver(provider: str, args: dict[str, str]) -> str | None:
    """Why a notifier so set up can deliver nothing (the default e-mail notifier before its 'to' is
    set), or None: said when it is attached and as its alerts' status, not only in their logs."""
    for name in PROVIDERS.get(provider, ()):
        if not str(args.get(name) or "").strip():
            what = "e-mail address" if provider == "email" else name
            return f"no {what}: set the notifier's {name!r}"
    return None


async def _email(args: dict[str, str], msg: Message, smtp: tuple[str, int] | None) -> str:
    if problem := cannot_deliver("email", args):
        raise DeliveryFailed(problem, retry=False)
    try:
        await mail.send(smtp, mail.message(args["to"], msg.subject, msg.text), timeout=TIMEOUT)
    except mail.MailNotConfigured as exc:
        raise DeliveryFailed(str(exc), retry=True) from None
    except smtplib.SMTPRecipientsRefused as exc:
        raise DeliveryFailed(f"SMTP refused the recipient: {exc}", retry=False) from None
    except (OSError, smtplib.SMTPException) as exc:
        raise DeliveryFailed(f"SMTP: {exc}", retry=True) from None
    return f"mailed to {args['to']}"
