from __future__ import annotations

from pydantic import Field

from spyglass.models.base import APIModel


class SavedQuery(APIModel):
    id: int | None = None  # this backend's handle for voting and tagging (the original sends none)
    votes: int = 0
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    timestamp: str | None = None
    title: str = ""
    query: str


class SavedQueryList(APIModel):
    matches: list[SavedQuery] = Field(default_factory=list)
    total: int = 0


class TagCount(APIModel):
    value: str
    count: int


class QueryTags(APIModel):
    matches: list[TagCount] = Field(default_factory=list)
    total: int = 0
