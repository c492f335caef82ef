"""The one typed environment reader (contracts.env), shared by the platform's settings and the gateway."""

from __future__ import annotations

import pytest

from contracts.env import (
    DEV_CREDENTIAL_KEYS,
    DEV_PEPPER,
    EnvError,
    env_bool,
    env_float,
    env_int,
    env_is_set,
    env_list,
    env_secret,
    env_str,
)
from contracts.redis_keys import usage_shard_count_from_env
from routing.process.config import GatewayConfig


def test_unset_and_blank_values_take_the_default(monkeypatch):
    for name in ("T_STR", "T_BOOL", "T_INT", "T_FLOAT", "T_LIST", "T_SECRET"):
        monkeypatch.delenv(name, raising=False)
    assert env_str("T_STR", "d") == "d" and env_bool("T_BOOL", True) is True
    assert env_int("T_INT", 7) == 7 and env_float("T_FLOAT", 0.5) == 0.5
    assert env_list("T_LIST", ("a", "b")) == ["a", "b"] and env_secret("T_SECRET", "s") == "s"
    monkeypatch.setenv("T_INT", " ")
    monkeypatch.setenv("T_FLOAT", "")
    assert env_int("T_INT", 7) == 7 and env_float("T_FLOAT", 0.5) == 0.5


def test_typed_values_are_parsed(monkeypatch):
    monkeypatch.setenv("T_BOOL", " Yes ")
    monkeypatch.setenv("T_INT", "42")
    monkeypatch.setenv("T_FLOAT", "2.5")
    monkeypatch.setenv("T_LIST", " a, ,b ,")
    assert env_bool("T_BOOL") is True and env_int("T_INT", 0) == 42 and env_float("T_FLOAT", 0) == 2.5
    assert env_list("T_LIST") == ["a", "b"]


@pytest.mark.parametrize(
    ("reader", "raw", "message"),
    [
        (lambda: env_bool("T_BAD"), "maybe", "T_BAD must be a boolean"),
        (lambda: env_int("T_BAD", 1), "1.5", "T_BAD must be an integer"),
        (lambda: env_float("T_BAD", 1.0), "fast", "T_BAD must be a number"),
    ],
)
def test_bad_values_raise_env_error_naming_the_variable(monkeypatch, reader, raw, message):
    monkeypatch.setenv("T_BAD", raw)
    with pytest.raises(EnvError, match=message):
        reader()


def test_secrets_come_from_the_named_file_first(monkeypatch, tmp_path):
    secret = tmp_path / "pepper"
    secret.write_text("from-file\n", encoding="utf-8")
    monkeypatch.setenv("T_SECRET", "from-env")
    assert env_secret("T_SECRET") == "from-env"
    monkeypatch.setenv("T_SECRET_FILE", str(secret))
    assert env_secret("T_SECRET") == "from-file"


def test_the_gateway_and_the_platform_share_the_dev_defaults(monkeypatch, settings):
    for name in ("TOKENWAY_ENV", "TOKENWAY_KEY_PEPPER", "TOKENWAY_KEY_PEPPER_FILE", "TOKENWAY_CREDENTIAL_KEYS"):
        monkeypatch.delenv(name, raising=False)
    config = GatewayConfig.from_env()
    assert config.key_pepper == DEV_PEPPER and config.credential_keys == DEV_CREDENTIAL_KEYS
    assert config.key_pepper == settings.API_KEY_PEPPER
    assert tuple(settings.CREDENTIAL_KEYS) == config.credential_keys


def test_the_gateway_refuses_production_without_a_pepper(monkeypatch):
    monkeypatch.setenv("TOKENWAY_ENV", "production")
    monkeypatch.delenv("TOKENWAY_KEY_PEPPER", raising=False)
    monkeypatch.delenv("TOKENWAY_KEY_PEPPER_FILE", raising=False)
    with pytest.raises(RuntimeError, match="TOKENWAY_KEY_PEPPER must be set in production"):
        GatewayConfig.from_env()
    monkeypatch.setenv("TOKENWAY_CREDENTIAL_KEYS", "k1, k2")
    monkeypatch.setenv("TOKENWAY_KEY_PEPPER", "p")
    assert GatewayConfig.from_env().credential_keys == ("k1", "k2")


def test_a_variable_set_to_nothing_is_set_and_the_shard_count_is_read_through_the_reader(monkeypatch):
    monkeypatch.delenv("T_SET", raising=False)
    assert env_is_set("T_SET") is False
    monkeypatch.setenv("T_SET", "")
    assert env_is_set("T_SET") is True
    monkeypatch.setenv("TOKENWAY_USAGE_SHARDS", "3")
    assert usage_shard_count_from_env() == 3
    monkeypatch.setenv("TOKENWAY_USAGE_SHARDS", "")
    assert usage_shard_count_from_env() == 1
