"""Resources of the geographic network tools service (its own Location shape)."""

from __future__ import annotations

from pydantic import Field

from spyglass.models.base import APIModel

# Geo forms name the locations that did not answer in this response header: a JSON array of
# {"agent": URL, "reason": text}. The array body holds only real measurements.
MISSING_HEADER = "X-Geonet-Missing"


class GeoLocation(APIModel):
    city: str
    country: str
    latlon: str = Field(description='"latitude,longitude" in decimal degrees')

    @property
    def coordinates(self) -> tuple[float, float] | None:
        try:
            lat, lon = (float(p) for p in self.latlon.split(","))
        except ValueError:
            return None
        return lat, lon


class PingResult(APIModel):
    ip: str
    is_alive: bool
    min_rtt: float = Field(description="milliseconds")
    avg_rtt: float = Field(description="milliseconds")
    max_rtt: float = Field(description="milliseconds")
    rtts: list[float] = Field(description="milliseconds, one per reply")
    packets_sent: int
    packets_received: int
    packet_loss: float = Field(description="fraction of packets lost, 0..1")
    from_loc: GeoLocation
    error: str | None = Field(
        default=None, description="why no packet could be sent, in words (spyglass extension; absent when the ping ran)"
    )


class DnsRecord(APIModel):
    type: str
    value: str


class DnsResult(APIModel):
    answers: list[DnsRecord]
    from_loc: GeoLocation
    status: str | None = Field(
        default=None, description="NOERROR, NXDOMAIN, SERVFAIL, TIMEOUT or ERROR (spyglass extension)"
    )
    error: str | None = Field(default=None, description="what went wrong, in words (spyglass extension)")


class ValidationErrorItem(APIModel):
    loc: list[str | int]
    msg: str
    type: str


class HTTPValidationError(APIModel):
    detail: list[ValidationErrorItem] = Field(default_factory=list)


class MissingAgent(APIModel):
    agent: str
    reason: str
