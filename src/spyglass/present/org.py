"""The organization as inert text: its facts and its people (admins first)."""

from __future__ import annotations

from spyglass.models import Organization
from spyglass.safetext import clean


def facts(org: Organization) -> list[tuple[str, str]]:
    return [
        ("name", clean(org.name, one_line=True)),
        ("id", clean(org.id, one_line=True)),
        ("created", clean((org.created or "-")[:19].replace("T", " "), one_line=True)),
        ("upgrade type", clean(org.upgrade_type or "-", one_line=True)),
        ("domains", clean(", ".join(org.domains) or "-", one_line=True)),
    ]


def people_rows(org: Organization) -> list[list[str]]:
    """``[username, e-mail, role]`` of every admin, then every member."""
    return [
        [clean(u.username, one_line=True), clean(u.email or "-", one_line=True), role]
        for role, users in (("admin", org.admins), ("member", org.members))
        for u in users
    ]
