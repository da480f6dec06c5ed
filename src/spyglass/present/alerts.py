"""Alerts and notifiers as text, for the CLI and the dashboard alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spyglass.safetext import clean
from spyglass.secrets import mask_key

SECRET_ARGS = frozenset({"token", "routing_key", "webhook_url"})  # as the backend's providers say


def expiry(alert: Any) -> str:
    if alert.expired:
        return "expired"
    if not alert.expires:
        return "never"
    return (alert.expiration or "")[:16].replace("T", " ") or f"{alert.expires}s"


def triggers(alert: Any) -> str:
    return ", ".join(sorted(alert.triggers)) or "(none: not notifying)"


def alert_row(alert: Any) -> tuple[str, str, str, str, str, str]:
    """ID, name, size, expiry, enabled triggers, networks."""
    return (
        clean(alert.id, one_line=True),
        clean(alert.name, one_line=True),
        str(alert.size if alert.size is not None else "-"),
        expiry(alert),
        triggers(alert),
        clean(", ".join(alert.filters.ip), one_line=True),
    )


def alert_lines(alert: Any) -> list[str]:
    """An alert in detail: networks, triggers with their ignored services, notifiers."""
    lines = [
        f"id          {clean(alert.id, one_line=True)}",
        f"name        {clean(alert.name, one_line=True)}",
        f"networks    {clean(', '.join(alert.filters.ip), one_line=True)}",
        f"size        {alert.size}",
        f"created     {clean(alert.created or '-', one_line=True)}",
        f"expires     {expiry(alert)}",
        f"triggers    {triggers(alert)}",
    ]
    for name, options in sorted(alert.triggers.items()):
        ignored = options.get("ignore", []) if isinstance(options, dict) else []
        if ignored:
            lines.append(f"  ignored for {name}: {clean(', '.join(map(str, ignored)), one_line=True)}")
    if alert.notifiers is not None:
        names = [notifier_label(n) for n in alert.notifiers]
        lines.append(f"notifiers   {', '.join(names) or '(none)'}")
    if alert.notify is not None:
        lines.append(f"status      {clean(alert.notify.get('reason', '-'), one_line=True)}")
    return lines


def alerts_meant(alerts: Sequence[Any], given: str) -> tuple[list[str], str | None]:
    """The ids of the alerts ``given`` names (its id, else its name, any case), and what is wrong
    when it is not one alert: the CLI and the dashboard's stream read a name alike."""
    if any(a.id == given for a in alerts):
        return [given], None
    named = [a.id for a in alerts if a.name == given] or [a.id for a in alerts if a.name.casefold() == given.casefold()]
    if len(named) > 1:
        return named, f"{len(named)} alerts are named {given!r}: give the id of one ({', '.join(named)})"
    return named, None if named else f"no alert has the id or the name {given!r}"


def losing_notifier(alerts: Sequence[Any], notifier_id: str, done: bool = False) -> str:
    """What deleting a notifier does to the alerts it notifies for ("" when none), for the
    confirmation that asks (``done``: the line that says it was deleted)."""
    using = [a for a in alerts if any(n.get("id") == notifier_id for n in a.notifiers or [])]
    alone = [a.name for a in using if len(a.notifiers or []) == 1]
    others = [a.name for a in using if len(a.notifiers or []) > 1]
    said = []
    if alone:
        now = "now has" if len(alone) == 1 else "now have"
        said.append(f"{_named(alone)} {now if done else 'will have'} no notifier")
    if others:
        now = "no longer notifies" if len(others) == 1 else "no longer notify"
        said.append(f"{_named(others)} {now if done else 'will no longer notify'} through it")
    return clean("; ".join(said), one_line=True, max_chars=300)


def _named(names: Sequence[str]) -> str:
    return ("alert " if len(names) == 1 else "alerts ") + ", ".join(names)


def notifier_label(n: Any) -> str:
    get = n.get if isinstance(n, dict) else lambda k: getattr(n, k, None)
    return clean(f"{get('id')} ({get('provider')})", one_line=True)


def masked_args(args: dict[str, Any]) -> str:
    """A notifier's arguments as shown: secrets masked to their last four characters."""
    shown = [f"{k}={mask_key(str(v)) if k in SECRET_ARGS else v}" for k, v in sorted(args.items())]
    return clean(" ".join(shown), one_line=True)


def notifier_row(n: Any) -> tuple[str, str, str, str]:
    return (
        clean(n.id, one_line=True),
        clean(n.provider, one_line=True),
        clean(n.description or "", one_line=True),
        masked_args(n.args),
    )


def notification_row(n: Any) -> tuple[str, str, str, str, str]:
    """When, service, notifier, outcome, detail."""
    return (
        clean(n.at[:19].replace("T", " "), one_line=True),
        clean(n.service or "(test)", one_line=True),
        clean(f"{n.notifier} ({n.provider})", one_line=True),
        clean(n.outcome if n.attempt <= 1 else f"{n.outcome} (try {n.attempt})", one_line=True),
        clean(n.detail, one_line=True),
    )


def table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> list[str]:
    """Rows as aligned text columns (the last column is not padded)."""
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers) - 1)]
    return [
        "  ".join([*(c.ljust(w) for c, w in zip(r, widths, strict=False)), r[-1]]).rstrip() for r in [headers, *rows]
    ]
