"""zun.common.utils and zun.image.policy beyond the vectors: what they read from the
configuration."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from zun.common import exception, utils
from zun.conf import CONF
from zun.image import policy


@pytest.fixture
def overrides() -> Iterator[None]:
    yield
    CONF.clear_override("max_limit", group="api")
    CONF.clear_override("default_registry", group="docker")
    CONF.clear_override("default_image_driver")


def test_validate_limit_follows_the_configured_maximum(overrides: None) -> None:
    CONF.set_override("max_limit", 50, group="api")
    assert utils.validate_limit(None) == 50
    assert utils.validate_limit("80") == 50
    assert utils.validate_limit(20) == 20


def test_parse_image_name_reads_the_configured_registry_and_driver(overrides: None) -> None:
    CONF.set_override("default_registry", "reg.example:5000", group="docker")
    assert policy.parse_image_name("app:1") == ("reg.example:5000/app", "1")
    assert policy.parse_image_name("quay.io/a/b") == ("quay.io/a/b", "latest")
    CONF.set_override("default_image_driver", "glance")
    assert policy.parse_image_name("app:1") == ("app", "")


def test_validate_container_state_message() -> None:
    row = SimpleNamespace(uuid="u-1", status="Paused")
    with pytest.raises(exception.InvalidStateException) as info:
        utils.validate_container_state(row, "delete_force")
    assert str(info.value) == "Cannot delete_force container u-1 in Paused state"
    assert info.value.code == 409


def test_is_all_projects_accepts_booleans() -> None:
    assert utils.is_all_projects({"all_projects": True}) is True
    assert utils.is_all_projects({"all_projects": False}) is False
    assert utils.is_all_projects({"all_projects": None}) is False
