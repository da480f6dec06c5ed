"""Profiles: where to connect and with which key.

A JSON file under the XDG config dir (mode 0600) holds named profiles and which one is active.
Environment variables override the active profile. A profile with no URL means the embedded
backend, started on demand.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from spyglass import DEFAULT_NAMESPACE
from spyglass.secrets import mask_key

ENV_KEY = "SPYGLASS_API_KEY"
ENV_URLS = {
    "url": "SPYGLASS_URL",
    "stream_url": "SPYGLASS_STREAM_URL",
    "trends_url": "SPYGLASS_TRENDS_URL",
    "geonet_url": "SPYGLASS_GEONET_URL",
}
EMBEDDED = "embedded"


def config_dir() -> Path:
    from platformdirs import user_config_dir

    return Path(os.environ.get("SPYGLASS_CONFIG_DIR") or user_config_dir("spyglass"))


def data_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(os.environ.get("SPYGLASS_DATA_DIR") or user_data_dir("spyglass"))


class Profile(BaseModel):
    """Where the four hosts are, the key, and how politely to call them."""

    model_config = ConfigDict(extra="ignore")

    name: str = EMBEDDED
    url: str | None = None  # None: the embedded backend
    stream_url: str | None = None
    trends_url: str | None = None
    geonet_url: str | None = None
    key: str | None = Field(default=None, repr=False)
    namespace: str = DEFAULT_NAMESPACE
    rate: float | None = 1.0  # client-side requests per second; None: unpaced
    timeout: float = 30.0

    @field_validator("url", "stream_url", "trends_url", "geonet_url")
    @classmethod
    def _http_url(cls, v: str | None) -> str | None:
        if v in (None, ""):
            return None
        if not v.startswith(("http://", "https://")):
            raise ValueError("a URL starts with http:// or https://")
        return v.rstrip("/")

    @property
    def embedded(self) -> bool:
        return self.url is None

    def base(self, host: str) -> str:
        """The base URL of ``host`` (main, stream, trends or geonet); derived from ``url``."""
        if host == "main":
            assert self.url is not None
            return self.url
        explicit = getattr(self, f"{host}_url")
        return explicit or f"{self.url}/{host}"

    def describe(self) -> str:
        return f"{self.name}: {self.url or 'embedded backend'} key {mask_key(self.key)}"


class Config(BaseModel):
    """The config file: profiles, the active one, and dashboard preferences."""

    active: str = EMBEDDED
    profiles: dict[str, Profile] = Field(default_factory=dict)
    theme: str | None = None
    keymap: dict[str, str] = Field(default_factory=dict)  # binding id -> keys, e.g. {"help": "f1"}

    @classmethod
    def path(cls) -> Path:
        return config_dir() / "config.json"

    @classmethod
    def load(cls) -> Config:
        path = cls.path()
        if not path.exists():
            return cls()
        return cls.model_validate_json(path.read_text())

    def save(self) -> None:
        path = self.path()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(self.model_dump_json(indent=2, exclude_none=True))
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)

    def profile(self, name: str | None = None) -> Profile:
        name = name or self.active
        if name in self.profiles:
            return self.profiles[name].model_copy()
        if name == EMBEDDED:
            return Profile(name=EMBEDDED, rate=None)
        raise KeyError(f"no profile named {name!r}")


def active_profile(name: str | None = None) -> Profile:
    """The profile to use: the named or active one, with environment overrides applied."""
    profile = Config.load().profile(name)
    updates = {field: os.environ[env] for field, env in ENV_URLS.items() if os.environ.get(env)}
    if os.environ.get(ENV_KEY):
        updates["key"] = os.environ[ENV_KEY]
    if updates:
        profile = Profile.model_validate({**profile.model_dump(), **updates, "name": profile.name})
    return profile
