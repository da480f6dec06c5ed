"""Profiles: where to connect and with which key.

A JSON file under the XDG config dir (mode 0600) holds named profiles, the active one, and
dashboard preferences. A profile with no URL means the embedded backend, started on demand.

Environment variables override the active profile in every mode: ``SPYGLASS_URL`` replaces the
main URL (and so leaves the embedded backend), ``SPYGLASS_STREAM_URL``, ``SPYGLASS_TRENDS_URL`` and
``SPYGLASS_GEONET_URL`` replace one host (with the embedded backend too: e.g. a remote geonet
agent), ``SPYGLASS_API_KEY`` replaces the key (with the embedded backend, instead of the local
account's key), ``SPYGLASS_NAMESPACE`` the namespace (``shodan`` for the original service).
``SPYGLASS_CONFIG_DIR`` and ``SPYGLASS_DATA_DIR`` move the config file and the embedded backend's
data (``--data`` wins over the latter).

Plain dataclasses rather than pydantic: this module is on the dashboard's start-up path.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from spyglass import DEFAULT_NAMESPACE
from spyglass.secrets import mask_key

ENV_KEY = "SPYGLASS_API_KEY"
ENV_NAMESPACE = "SPYGLASS_NAMESPACE"
# The original service: its four hosts and its namespace (`spyglass profile add NAME --preset shodan`).
PRESETS: dict[str, dict[str, str]] = {
    "shodan": {
        "url": "https://api.shodan.io",
        "stream_url": "https://stream.shodan.io",
        "trends_url": "https://trends.shodan.io",
        "geonet_url": "https://geonet.shodan.io",
        "namespace": "shodan",
    }
}
ENV_URLS = {
    "url": "SPYGLASS_URL",
    "stream_url": "SPYGLASS_STREAM_URL",
    "trends_url": "SPYGLASS_TRENDS_URL",
    "geonet_url": "SPYGLASS_GEONET_URL",
}
EMBEDDED = "embedded"
URL_FIELDS = tuple(ENV_URLS)


def url_has_host(url: str) -> bool:
    """Whether an http(s) URL names a host and, if any, a port that is a number ("http://" does not)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is no number
    except ValueError:
        return False
    return bool(parts.hostname)


class ConfigError(ValueError):
    """A profile or config file that cannot be used; the message names the field."""


def config_dir() -> Path:
    from platformdirs import user_config_dir

    return Path(os.environ.get("SPYGLASS_CONFIG_DIR") or user_config_dir("spyglass"))


def data_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(os.environ.get("SPYGLASS_DATA_DIR") or user_data_dir("spyglass"))


@dataclass
class Profile:
    """Where the four hosts are, the key, and how politely to call them."""

    name: str = EMBEDDED
    url: str | None = None  # None: the embedded backend
    stream_url: str | None = None
    trends_url: str | None = None
    geonet_url: str | None = None
    key: str | None = field(default=None, repr=False)
    namespace: str = DEFAULT_NAMESPACE
    rate: float | None = 1.0  # client-side requests per second; None: unpaced
    timeout: float = 30.0

    def __post_init__(self) -> None:
        if not self.name:
            raise ConfigError("name: a profile needs a name")
        for name in URL_FIELDS:
            value = getattr(self, name)
            if value in (None, ""):
                setattr(self, name, None)
            elif not isinstance(value, str) or not value.startswith(("http://", "https://")):
                raise ConfigError(f"{name}: a URL starts with http:// or https://")
            elif not url_has_host(value):
                raise ConfigError(f"{name}: {value!r} names no host (e.g. http://127.0.0.1:8000)")
            else:
                setattr(self, name, value.rstrip("/"))
        if not isinstance(self.name, str):
            raise ConfigError("name: a profile name is text")
        if self.key is not None and not isinstance(self.key, str):
            raise ConfigError("key: an API key is text")
        if not isinstance(self.namespace, str) or not self.namespace.isidentifier():
            raise ConfigError("namespace: one word of letters, digits and underscores")
        for name in ("rate", "timeout"):
            value = getattr(self, name)
            if value in (None, "") and name == "rate":
                self.rate = None
                continue
            try:
                if isinstance(value, bool):
                    raise TypeError
                number = float(value)
            except (TypeError, ValueError):
                raise ConfigError(f"{name}: a number is needed") from None
            if number <= 0:
                raise ConfigError(f"{name}: must be more than 0")
            setattr(self, name, number)
        self.key = self.key or None

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Profile:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        # rate None (unpaced) is kept: left out, it would load back as the default pace
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None or k == "rate"}

    def replace(self, **changes: Any) -> Profile:
        return dataclasses.replace(self, **changes)

    @property
    def embedded(self) -> bool:
        return self.url is None

    def base(self, host: str) -> str:
        """The base URL of ``host`` (main, stream, trends or geonet); derived from ``url``."""
        if self.url is None:
            raise ConfigError("the profile has no URL: start the embedded backend first")
        if host == "main":
            return self.url
        return getattr(self, f"{host}_url") or f"{self.url}/{host}"

    def key_source(self) -> str:
        """Which key this is, for an error message: masked, with the profile it came from."""
        origin = f" from {ENV_KEY}" if self.key and os.environ.get(ENV_KEY) == self.key else ""
        return f"the key {mask_key(self.key)}{origin} (profile {self.name!r})"

    def describe(self) -> str:
        return f"{self.name}: {self.url or 'embedded backend'} key {mask_key(self.key)}"


@dataclass
class Config:
    active: str = EMBEDDED
    profiles: dict[str, Profile] = field(default_factory=dict)
    theme: str | None = None
    keymap: dict[str, str] = field(default_factory=dict)  # binding id -> keys, e.g. {"help": "f1"}
    location: str | None = None  # this machine, "City,CC,latitude,longitude", for the geo pane
    alert_signal: str = "off"  # a fired alert beyond the screen: off, bell, osc9 or osc777 (tui/alertnotices.py)

    @classmethod
    def path(cls) -> Path:
        return config_dir() / "config.json"

    @classmethod
    def load(cls) -> Config:
        path = cls.path()
        if not path.exists():
            return cls()
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(raw, dict):
                raise ConfigError("the file holds no JSON object")
            profiles = _member(raw, "profiles", dict, {})
            config = cls(
                active=_member(raw, "active", str, EMBEDDED),
                profiles={name: _profile(name, profiles[name]) for name in profiles},
                theme=_member(raw, "theme", str, None),
                keymap={str(k): str(v) for k, v in _member(raw, "keymap", dict, {}).items()},
                location=_member(raw, "location", str, None),
                alert_signal=_member(raw, "alert_signal", str, "off"),
            )
        except OSError as exc:
            raise ConfigError(f"cannot read the config file {path}: {exc.strerror or exc}") from None
        except json.JSONDecodeError as exc:
            raise ConfigError(f"the config file {path} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"the config file {path} is not usable: {exc}") from None
        return config

    def save(self) -> None:
        path = self.path()
        path.parent.mkdir(parents=True, exist_ok=True)
        body = {
            "active": self.active,
            "profiles": {n: p.to_dict() for n, p in self.profiles.items()},
            "theme": self.theme,
            "keymap": self.keymap,
            "location": self.location,
            "alert_signal": None if self.alert_signal == "off" else self.alert_signal,
        }
        write_private(path, json.dumps({k: v for k, v in body.items() if v is not None}, indent=2))

    def profile(self, name: str | None = None) -> Profile:
        name = name or self.active
        if name in self.profiles:
            return self.profiles[name].replace()
        if name == EMBEDDED:
            return Profile(name=EMBEDDED, rate=None)
        raise ConfigError(f"no profile named {name!r}")


def _member(raw: dict, name: str, kind: type, default: Any) -> Any:
    value = raw.get(name, default)
    if value is not None and not isinstance(value, kind):
        raise ConfigError(
            f"{name}: {'an object' if kind is dict else kind.__name__} expected, not {type(value).__name__}"
        )
    return value


def _profile(name: str, values: Any) -> Profile:
    try:
        if not isinstance(values, dict):
            raise ConfigError(f"an object expected, not {type(values).__name__}")
        return Profile.from_dict({**values, "name": name})
    except ConfigError as exc:
        raise ConfigError(f"profile {name!r}: {exc}") from None


def active_profile(name: str | None = None) -> Profile:
    """The profile to use: the named or active one, with environment overrides applied."""
    profile = Config.load().profile(name)
    updates = {field: os.environ[env] for field, env in ENV_URLS.items() if os.environ.get(env)}
    if os.environ.get(ENV_KEY):
        updates["key"] = os.environ[ENV_KEY]
    if os.environ.get(ENV_NAMESPACE):
        updates["namespace"] = os.environ[ENV_NAMESPACE].strip()
    return profile.replace(**updates) if updates else profile


def write_private(path: Path, text: str) -> None:
    """``path`` holding ``text``, readable by its owner only (whatever the umask), replaced whole."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
