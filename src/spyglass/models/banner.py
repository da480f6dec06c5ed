"""The banner record: one service seen on one port at one time."""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationInfo, field_validator, model_validator

from spyglass import DEFAULT_NAMESPACE
from spyglass.models.base import APIModel
from spyglass.models.location import Location


def namespace_of(info: ValidationInfo | None) -> str:
    ctx = info.context if info is not None else None
    return (ctx or {}).get("namespace", DEFAULT_NAMESPACE)


class Vulnerability(APIModel):
    verified: bool = False
    references: list[str] = Field(default_factory=list)
    cvss: str | float | None = None
    summary: str | None = None


class HttpComponent(APIModel):
    categories: list[str] = Field(default_factory=list)


class HttpRedirect(APIModel):
    host: str | None = None
    html: str | None = None
    data: str | None = None
    location: str | None = None


class Http(APIModel):
    status: int | None = None
    title: str | None = None
    server: str | None = None
    host: str | None = None
    html: str | None = None
    location: str | None = None
    robots: str | None = None
    sitemap: str | None = None
    securitytxt: str | None = None
    robots_hash: int | None = None
    sitemap_hash: int | None = None
    securitytxt_hash: int | None = None
    html_hash: int | None = None
    redirects: list[HttpRedirect] = Field(default_factory=list)
    components: dict[str, HttpComponent] = Field(default_factory=dict)


class DhParams(APIModel):
    prime: str | None = None
    public_key: str | None = None
    bits: int | None = None
    generator: int | str | None = None
    fingerprint: str | None = None


class TlsExtension(APIModel):
    id: int | None = None
    name: str | None = None


class Certificate(APIModel):
    sig_alg: str | None = None
    issued: str | None = None
    expires: str | None = None
    expired: bool | None = None
    version: int | None = None
    extensions: list[dict[str, Any]] = Field(default_factory=list)
    fingerprint: dict[str, str] = Field(default_factory=dict)
    serial: int | str | None = None
    subject: dict[str, str] = Field(default_factory=dict)
    issuer: dict[str, str] = Field(default_factory=dict)
    pubkey: dict[str, Any] = Field(default_factory=dict)


class Cipher(APIModel):
    version: str | None = None
    bits: int | None = None
    name: str | None = None


class Ssl(APIModel):
    chain: list[str] = Field(default_factory=list)
    chain_sha256: list[str] = Field(default_factory=list)
    jarm: str | None = None
    ja3s: str | None = None
    dhparams: DhParams | None = None
    versions: list[str] = Field(default_factory=list)
    acceptable_cas: list[Any] = Field(default_factory=list)
    tlsext: list[TlsExtension] = Field(default_factory=list)
    alpn: list[str] = Field(default_factory=list)
    cert: Certificate | None = None
    cipher: Cipher | None = None
    trust: dict[str, Any] | None = None
    ocsp: dict[str, Any] | None = None


class Ssh(APIModel):
    hassh: str | None = None
    fingerprint: str | None = None
    mac: str | None = None
    cipher: str | None = None
    key: str | None = None
    type: str | None = None
    kex: dict[str, Any] = Field(default_factory=dict)


class Cloud(APIModel):
    provider: str | None = None
    service: str | None = None
    region: str | None = None


class CrawlerMeta(APIModel):
    """The ``_intel`` member: which crawler and module produced the banner."""

    id: str | None = None
    module: str | None = None
    crawler: str | None = None
    ptr: bool | None = None
    options: dict[str, Any] = Field(default_factory=dict)


class Banner(APIModel):
    """A banner record. Module-specific members (``mongodb``, ``rdp``...) are kept as extras.

    The crawler metadata member is ``_<namespace>`` on the wire (``_intel`` by default); pass
    ``context={"namespace": ...}`` when validating bodies of a service with another namespace.
    It is available here as ``meta`` whatever the namespace.
    """

    ip: int | None = None
    ip_str: str | None = None
    port: int
    transport: str = "tcp"
    hash: int | None = None
    timestamp: str
    hostnames: list[str] = Field(default_factory=list)
    domains: list[str] = Field(default_factory=list)
    org: str | None = None
    isp: str | None = None
    asn: str | None = None
    os: str | None = None
    data: str = ""
    product: str | None = None
    version: str | None = None
    info: str | None = None
    cpe: list[str] = Field(default_factory=list)
    cpe23: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    location: Location = Field(default_factory=Location)
    http: Http | None = None
    ssl: Ssl | None = None
    ssh: Ssh | None = None
    ntp: dict[str, Any] | None = None
    dns: dict[str, Any] | None = None
    vulns: dict[str, Vulnerability] = Field(default_factory=dict)
    cloud: Cloud | None = None
    opts: dict[str, Any] = Field(default_factory=dict)
    meta: CrawlerMeta | None = Field(default=None, alias="_intel")
    id_: str | None = Field(default=None, alias="_id")

    @model_validator(mode="before")
    @classmethod
    def _namespaced_meta(cls, data: Any, info: ValidationInfo) -> Any:
        ns = namespace_of(info)
        if isinstance(data, dict) and ns != "intel" and f"_{ns}" in data:
            data = dict(data)
            data["_intel"] = data.pop(f"_{ns}")
        return data

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, v: Any) -> Any:
        # Some modules report numeric versions (e.g. steam-a2s sends 47).
        return str(v) if isinstance(v, (int, float)) else v

    def to_api(self, namespace: str = DEFAULT_NAMESPACE) -> dict:
        body = super().to_api()
        if "_intel" in body and namespace != "intel":
            body[f"_{namespace}"] = body.pop("_intel")
        return body

    @property
    def address(self) -> str:
        return self.ip_str or ""

    @property
    def module(self) -> str | None:
        return self.meta.module if self.meta else None

    @property
    def product_line(self) -> str:
        """Product and version as one label, e.g. ``nginx 1.24.0`` (may be empty)."""
        return " ".join(x for x in (self.product, self.version) if x)

    @property
    def headline(self) -> str:
        """What a list shows for the service: its HTTP title, else the banner's first line."""
        if self.http and self.http.title:
            return self.http.title
        return self.data.strip().split("\n", 1)[0]
