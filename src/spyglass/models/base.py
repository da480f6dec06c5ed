"""Shared base classes for the API models.

Responses of the original service carry members the seeds do not list, and omit some they do;
every model therefore ignores nothing (``extra="allow"``) and requires only what the service
always sends.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class APIModel(BaseModel):
    """A resource as the API sends it: unknown members are kept, field names or aliases accepted."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_api(self) -> dict:
        """The JSON body the service would send (aliases, no members it never had)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class Success(APIModel):
    success: bool
