"""The pure helpers of zun.common.utils and zun.image.policy against the original's vectors."""

from __future__ import annotations

import copy
import datetime
import json
from types import SimpleNamespace
from typing import Any

import pytest
from reference import vectors

from zun.common import exception, utils
from zun.image import policy

FROZEN_NOW = datetime.datetime(2026, 1, 15, 12, 0, 0)


def _load_vectors() -> dict[str, Any]:
    return vectors()


VECTORS = _load_vectors()


def _cases(section: str) -> list[Any]:
    cases = VECTORS[section]["cases"]
    return [
        pytest.param(c, id=f"{i}-{json.dumps(c['input'], sort_keys=True)[:80]}")
        for i, c in enumerate(cases)
    ]


def _check(call: Any, case: dict[str, Any]) -> None:
    """Run ``call`` and compare with the case's output or error (class, message, code)."""
    if "error" in case:
        err = case["error"]
        with pytest.raises(Exception) as info:
            call()
        assert type(info.value).__name__ == err["class"]
        assert str(info.value) == err["message"]
        if "code" in err:
            assert info.value.code == err["code"]
            assert info.value.error_code == err["err_code"]
    else:
        assert call() == case["output"]


def test_vector_counts_are_complete() -> None:
    counts = VECTORS["_meta"]["counts"]
    for section in (
        "VALID_STATES",
        "validate_container_state",
        "check_for_restart_policy",
        "build_exposed_ports",
        "format_status_detail",
        "get_image_pull_policy",
        "is_all_projects",
        "validate_limit_sort_dir",
        "parse_image_name",
        "should_pull_image",
    ):
        assert len(VECTORS[section]["cases"]) == counts[section]


@pytest.mark.parametrize("case", _cases("VALID_STATES"))
def test_valid_states(case: dict[str, Any]) -> None:
    assert utils.VALID_STATES[case["input"]["action"]] == case["output"]


def test_valid_states_has_no_extra_action() -> None:
    assert set(utils.VALID_STATES) == {
        c["input"]["action"] for c in VECTORS["VALID_STATES"]["cases"]
    }


@pytest.mark.parametrize("case", _cases("validate_container_state"))
def test_validate_container_state(case: dict[str, Any]) -> None:
    container = SimpleNamespace(
        uuid="c0ffee00-0000-4000-8000-000000000001", status=case["input"]["status"]
    )

    def call() -> str:
        utils.validate_container_state(container, case["input"]["action"])
        return "ok"

    _check(call, case)


@pytest.mark.parametrize("case", _cases("check_for_restart_policy"))
def test_check_for_restart_policy(case: dict[str, Any]) -> None:
    container_dict = copy.deepcopy(case["input"]["container_dict"])

    def call() -> dict[str, Any]:
        utils.check_for_restart_policy(container_dict)
        return container_dict

    _check(call, case)


@pytest.mark.parametrize("case", _cases("build_exposed_ports"))
def test_build_exposed_ports(case: dict[str, Any]) -> None:
    _check(lambda: utils.build_exposed_ports(case["input"]["ports"]), case)


@pytest.mark.parametrize("case", _cases("format_status_detail"))
def test_format_status_detail(case: dict[str, Any]) -> None:
    _check(lambda: utils.format_status_detail(case["input"]["status_time"], now=FROZEN_NOW), case)


@pytest.mark.parametrize("case", _cases("get_image_pull_policy"))
def test_get_image_pull_policy(case: dict[str, Any]) -> None:
    # Zun's get_image_pull_policy(policy, tag) ignored the tag; so does effective_policy.
    i = case["input"]
    _check(lambda: policy.effective_policy(i["image_pull_policy"]), case)


@pytest.mark.parametrize("case", _cases("should_pull_image"))
def test_should_pull_image(case: dict[str, Any]) -> None:
    i = case["input"]
    _check(lambda: policy.should_pull(i["image_pull_policy"], i["present"]), case)


@pytest.mark.parametrize("case", _cases("is_all_projects"))
def test_is_all_projects(case: dict[str, Any]) -> None:
    _check(lambda: utils.is_all_projects(case["input"]["search_opts"]), case)


@pytest.mark.parametrize("case", _cases("validate_limit_sort_dir"))
def test_validate_limit_sort_dir(case: dict[str, Any]) -> None:
    i = case["input"]
    if i["fn"] == "validate_limit":
        _check(lambda: utils.validate_limit(i["value"], max_limit=1000), case)
    else:
        _check(lambda: utils.validate_sort_dir(i["value"]), case)


@pytest.mark.parametrize("case", _cases("parse_image_name"))
def test_parse_image_name(case: dict[str, Any]) -> None:
    i = case["input"]
    conf = i.get("conf", {})
    default_registry = conf.get("docker.default_registry")

    def call() -> list[str]:
        repo, tag = policy.parse_image_name(
            i["image"],
            driver=i.get("driver", "docker"),
            registry=SimpleNamespace(domain=i["registry_domain"])
            if "registry_domain" in i
            else None,
            default_registry=default_registry,
        )
        return [repo, tag]

    _check(call, case)


def test_parse_image_name_accepts_a_domain_string() -> None:
    assert policy.parse_image_name(
        "app", driver="docker", registry="reg:5000", default_registry=None
    ) == ("reg:5000/app", "latest")


def test_invalid_reference_is_one_family() -> None:
    # The node catches InvalidReference once for every way a name can be wrong.
    for bad in ("", "Busybox", "busybox@sha256:abc", "a" * 256):
        with pytest.raises(exception.InvalidReference):
            policy.parse_image_name(bad, driver="docker")
