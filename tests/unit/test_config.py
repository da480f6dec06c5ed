"""Profiles and the config file: a broken file is one ConfigError naming it; overrides apply in every mode."""

from __future__ import annotations

import json
import os

import pytest

from spyglass.config import Config, ConfigError, Profile, active_profile, config_dir, data_dir


def write_config(body: str) -> str:
    path = Config.path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return str(path)


@pytest.mark.parametrize(
    "body, why",
    [
        ("{not json", "is not valid JSON: Expecting property name enclosed in double quotes at line 1"),
        ("[1, 2]", "the file holds no JSON object"),
        ('{"profiles": []}', "profiles: an object expected, not list"),
        ('{"profiles": {"w": 5}}', "profile 'w': an object expected, not int"),
        ('{"profiles": {"w": {"url": 5}}}', "profile 'w': url: a URL starts with http:// or https://"),
        ('{"profiles": {"w": {"url": "http://"}}}', "profile 'w': url: 'http://' names no host"),
        ('{"profiles": {"w": {"url": "http://h:port"}}}', "profile 'w': url: 'http://h:port' names no host"),
        ('{"profiles": {"w": {"url": "http://x", "rate": true}}}', "profile 'w': rate: a number is needed"),
        ('{"profiles": {"w": {"url": "http://x", "key": 123}}}', "profile 'w': key: an API key is text"),
        ('{"active": 3}', "active: str expected, not int"),
        ('{"theme": ["a"]}', "theme: str expected, not list"),
        ('{"keymap": "f1"}', "keymap: an object expected, not str"),
        ('"\\ud800"', "the file holds no JSON object"),
    ],
)
def test_a_broken_config_file_is_one_error_naming_the_file(body, why):
    path = write_config(body)
    with pytest.raises(ConfigError) as caught:
        Config.load()
    assert path in str(caught.value) and why in str(caught.value) and "\n" not in str(caught.value)


def test_a_config_file_that_is_a_folder():
    Config.path().mkdir(parents=True)
    with pytest.raises(ConfigError, match="cannot read the config file"):
        Config.load()


def test_environment_dirs():
    assert str(config_dir()) == os.environ["SPYGLASS_CONFIG_DIR"]
    assert str(data_dir()) == os.environ["SPYGLASS_DATA_DIR"]


def test_overrides_on_a_remote_profile(monkeypatch):
    Config(profiles={"w": Profile(name="w", url="https://a.example", key="k1")}, active="w").save()
    monkeypatch.setenv("SPYGLASS_API_KEY", "k2")
    monkeypatch.setenv("SPYGLASS_TRENDS_URL", "https://t.example/")
    p = active_profile()
    assert (p.url, p.key, p.trends_url, p.base("stream")) == (
        "https://a.example",
        "k2",
        "https://t.example",
        "https://a.example/stream",
    )
    monkeypatch.setenv("SPYGLASS_URL", "http://127.0.0.1:1")
    assert active_profile().url == "http://127.0.0.1:1"


def test_key_source_is_masked_and_says_where_it_came_from(monkeypatch):
    monkeypatch.setenv("SPYGLASS_API_KEY", "abcdefgh12345678")
    text = active_profile().key_source()
    assert text == "the key ••••••••5678 from SPYGLASS_API_KEY (profile 'embedded')"
    assert (
        Profile(name="w", url="http://x", key="abcdefgh99999999").key_source() == "the key ••••••••9999 (profile 'w')"
    )


def test_a_saved_config_loads_back(tmp_path):
    config = Config(
        profiles={"w": Profile(name="w", url="https://a.example", key="k", rate=None)},
        active="w",
        theme="dark",
        keymap={"help": "f1"},
        location="Berlin,DE,52.5,13.4",
    )
    config.save()
    again = Config.load()
    assert again == config and json.loads(Config.path().read_text())["active"] == "w"
    assert oct(Config.path().stat().st_mode & 0o777) == "0o600"
