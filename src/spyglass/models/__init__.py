"""Pydantic models for every resource of the intelligence and geonet services.

The same models are the embedded backend's response models and the client's parse targets.
"""

from spyglass.models.account import AccountProfile, ApiInfo, UsageLimits
from spyglass.models.alert import Alert, AlertFilters, Attached, Notification, Trigger
from spyglass.models.banner import Banner
from spyglass.models.base import APIModel, Success
from spyglass.models.data import Dataset, DatasetFile
from spyglass.models.directory import QueryTags, SavedQuery, SavedQueryList, TagCount
from spyglass.models.dns import DomainInfo, DomainRecord
from spyglass.models.geonet import (
    DnsRecord,
    DnsResult,
    GeoLocation,
    HTTPValidationError,
    MissingAgent,
    PingResult,
    ValidationErrorItem,
)
from spyglass.models.host import HostRecord
from spyglass.models.notifier import Notifier, NotifierCreated, NotifierList, NotifierTest, ProviderSpec
from spyglass.models.org import Organization, OrgInvitation, OrgUser
from spyglass.models.scan import ScanList, ScanListItem, ScanState, ScanStatus, ScanSubmission
from spyglass.models.search import FacetValue, SearchResponse, SearchTokens, SelectedFields
from spyglass.models.trends import MonthCount, MonthFacet, TrendsResponse

__all__ = [
    "APIModel",
    "AccountProfile",
    "Alert",
    "Attached",
    "AlertFilters",
    "ApiInfo",
    "Banner",
    "Dataset",
    "DatasetFile",
    "DnsRecord",
    "DnsResult",
    "DomainInfo",
    "DomainRecord",
    "FacetValue",
    "GeoLocation",
    "HTTPValidationError",
    "HostRecord",
    "MissingAgent",
    "MonthCount",
    "MonthFacet",
    "Notification",
    "Notifier",
    "NotifierCreated",
    "NotifierList",
    "NotifierTest",
    "OrgInvitation",
    "OrgUser",
    "Organization",
    "PingResult",
    "ProviderSpec",
    "QueryTags",
    "SavedQuery",
    "SavedQueryList",
    "ScanList",
    "ScanListItem",
    "ScanState",
    "ScanStatus",
    "ScanSubmission",
    "SearchResponse",
    "SearchTokens",
    "SelectedFields",
    "Success",
    "TagCount",
    "Trigger",
    "TrendsResponse",
    "UsageLimits",
    "ValidationErrorItem",
]
