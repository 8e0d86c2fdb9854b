"""The API's pure rules against the original's vectors (tests/contract/vectors.json)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from reference import vectors

from zun.api import common, errors, microversion
from zun.common import exception


def _load_vectors() -> dict[str, Any]:
    return vectors()


VECTORS = _load_vectors()


def _cases(section: str) -> list[Any]:
    return [
        pytest.param(c, id=f"{i}-{json.dumps(c['input'], sort_keys=True)[:70]}")
        for i, c in enumerate(VECTORS[section]["cases"])
    ]


ORIGINAL_MAX = "1.40"


@pytest.mark.parametrize("case", _cases("api_version_negotiation"))
def test_version_negotiation(case: dict[str, Any]) -> None:
    """The original's vectors, with its maximum (1.40) read as ours: 1.41 adds routes only."""
    header = case["input"]["OpenStack-API-Version"]
    case = json.loads(
        json.dumps(case).replace(
            f"container {ORIGINAL_MAX}]", f"container {microversion.MAX_VERSION}]"
        )
    )
    if header and header.split()[-1] == str(microversion.MAX_VERSION):
        assert str(microversion.parse_header(header)) == str(microversion.MAX_VERSION)
        return
    if (
        case.get("output", {}).get("version") == ORIGINAL_MAX
        and header
        and header.split()[-1].lower() == "latest"
    ):
        case["output"] = {
            "version": str(microversion.MAX_VERSION),
            "response_header": f"container {microversion.MAX_VERSION}",
        }
    if "error" in case:
        with pytest.raises(microversion.VersionError) as caught:
            microversion.parse_header(header)
        assert caught.value.detail == case["error"]["message"]
        # Out-of-range versions carry the range in the 406 body; malformed ones do not.
        assert caught.value.unsupported == ("max_version" in case["error"])
        return
    version = microversion.parse_header(header)
    assert str(version) == case["output"]["version"]
    headers = dict(microversion.response_headers(version))
    assert headers[microversion.HEADER] == case["output"]["response_header"]


def _instance(cls: type[exception.ZunException]) -> exception.ZunException:
    try:
        return cls()
    except TypeError:
        return cls(message="x")


@pytest.mark.parametrize("case", _cases("convert_excp_to_err_code"))
def test_error_code_derivation(case: dict[str, Any]) -> None:
    name = case["input"]["excp_name"]
    assert exception.convert_excp_to_err_code(name) == case["output"]
    base_name = name.removesuffix("_Remote")
    cls = getattr(exception, base_name, None)
    if cls is None or ("class_http_code" not in case and not name.endswith("_Remote")):
        # A synthetic name, or one of Zun's classes this service never raises (it defines
        # only the ones it raises): only the derivation itself is specified.
        return
    if name.endswith("_Remote"):
        # What oslo.messaging builds for an exception that crossed RPC: a subclass so named.
        cls = type(name, (cls,), {"__module__": exception.__name__})
    else:
        assert cls.code == case["class_http_code"]
    status, code, _title, _detail = errors.describe(_instance(cls), "req-1")
    assert status == cls.code
    # The body's code: "container." + the derived name for client errors; "container." alone
    # for server errors, whose details are never shown.
    assert code == ("container." + case["output"] if status < 500 else "container.")


@pytest.mark.parametrize("case", _cases("validate_limit_sort_dir"))
def test_page_params(case: dict[str, Any]) -> None:
    fn, value = case["input"]["fn"], case["input"]["value"]
    params = {"limit": value} if fn == "validate_limit" else {"sort_dir": value}
    if "error" in case:
        with pytest.raises(exception.InvalidValue) as caught:
            common.page_params(params)
        assert str(caught.value) == case["error"]["message"]
        assert caught.value.code == 400
        return
    page = common.page_params(params)
    assert (page.limit if fn == "validate_limit" else page.sort_dir) == case["output"]


@pytest.mark.parametrize("case", _cases("is_all_projects"))
def test_all_projects(case: dict[str, Any]) -> None:
    opts = case["input"]["search_opts"]
    if "error" in case:
        with pytest.raises(exception.InvalidValue) as caught:
            common.all_projects(opts)
        assert str(caught.value) == case["error"]["message"]
        return
    assert common.all_projects(opts) is case["output"]
