from __future__ import annotations

from pydantic import Field

from spyglass.models.base import APIModel


class OrgUser(APIModel):
    username: str
    email: str | None = None


class OrgInvitation(APIModel):
    """An organization that invited this account (spyglass's backend, beyond the seed)."""

    id: str
    name: str
    invited: str


class Organization(APIModel):
    id: str
    name: str
    created: str | None = None
    upgrade_type: str | None = None
    admins: list[OrgUser] = Field(default_factory=list)
    members: list[OrgUser] = Field(default_factory=list)
    domains: list[str] = Field(default_factory=list)
    logo: bool | None = None
