"""The OpenAPI document: generated from the code, committed up to date, served, and fuzzed.

Regenerate the committed copy after changing a route or a schema::

    python -m zun.api.openapi --output docs/api/openapi.json
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from unit.api.apptesting import ADMIN, ApiClient

from zun.api import openapi, routing, validation

COMMITTED = Path(__file__).resolve().parents[3] / "docs" / "api" / "openapi.json"


def test_committed_document_is_up_to_date() -> None:
    assert COMMITTED.is_file(), "run: python -m zun.api.openapi -o docs/api/openapi.json"
    assert json.loads(COMMITTED.read_text()) == openapi.build_document(), (
        "docs/api/openapi.json is stale; run: python -m zun.api.openapi -o docs/api/openapi.json"
    )


def test_document_covers_every_route_and_schema() -> None:
    doc = openapi.build_document()
    assert doc["openapi"].startswith("3.1")
    for r in routing.registered_routes():
        op = doc["paths"][r.path][r.method.lower()]
        if r.versioned:
            windows = {
                (w["min_version"], w["max_version"]) for w in op["x-openstack-microversions"]
            }
            assert (str(r.min_version), str(r.max_version)) in windows
    assert set(validation.schema_names()) <= set(doc["components"]["schemas"])
    enable = doc["paths"]["/v1/services/enable"]["put"]
    assert {p["name"] for p in enable["parameters"] if p["in"] == "query"} == {"host", "binary"}
    assert doc["paths"]["/v1/hosts"]["get"]["x-openstack-microversions"] == [
        {"min_version": "1.4", "max_version": "1.41", "handler": "list_hosts"}
    ]


def test_served_at_v1_openapi_json(api: ApiClient) -> None:
    for path in ("/v1/openapi.json", "/v1/openapi", "/openapi.json"):
        reply = api.as_member("project-a").get(path)
        assert reply.status == 200, reply
        assert reply.json == openapi.build_document()


# --- fuzzing ---------------------------------------------------------------------------------
# schemathesis drives hypothesis from the document; its pytest plugin does not support this
# pytest, so each operation is one parametrized test running a hypothesis search itself.

import schemathesis  # noqa: E402  (a test dependency: missing, it must fail, not skip)
from hypothesis import HealthCheck, given, settings  # noqa: E402

#: Operations left out of the fuzzing ("METHOD /path"), each with its reason. Keep it short.
FUZZ_EXCLUDE: dict[str, str] = {
    # Answered by a compute node over the bus; this app has none, so the honest answer is a
    # 503. The route is exercised against a real agent in test_images.py.
    "GET /v1/images/{image}/search": "needs a compute node (covered by test_images.py)",
}

FUZZ_SCHEMA = schemathesis.openapi.from_dict(openapi.build_document())
FUZZ_OPERATIONS = {
    f"{op.method.upper()} {op.path}": op
    for op in (r.ok() for r in FUZZ_SCHEMA.get_all_operations())
}


def test_fuzz_exclusions_name_real_operations() -> None:
    """An excluded operation is left out of the parameters (not skipped) but must still exist."""
    assert set(FUZZ_EXCLUDE) <= set(FUZZ_OPERATIONS)


@pytest.mark.parametrize("label", sorted(set(FUZZ_OPERATIONS) - set(FUZZ_EXCLUDE)))
def test_no_server_error(api_app: Any, seed: Any, label: str) -> None:
    """Whatever parameters and bodies the schemas allow, the answer is never a 5xx."""
    seed.service(host="node1", availability_zone="az1")
    seed.compute_node("node1", uuid="2b6f1c3e-0000-4000-8000-00000000000a")
    headers = {
        "X-User-Id": ADMIN["user"],
        "X-Project-Id": ADMIN["project"],
        "X-Roles": ADMIN["roles"],
        "OpenStack-API-Version": "container latest",
    }

    @settings(
        max_examples=30,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=FUZZ_OPERATIONS[label].as_strategy())
    def search(case: Any) -> None:
        response = case.call(headers=headers, app=api_app)
        assert response.status_code < 500, (
            label,
            case.path_parameters,
            case.query,
            case.body,
            response.text[:500],
        )

    search()
