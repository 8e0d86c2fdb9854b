"""The allocation-candidates query against the original's vectors (tests/contract/vectors.json,
``placement_query``): the same resources, forbidden trait, in_tree and limit, in the same order.

Cases with flavor-style extra specs (``resources:…``, ``trait:…``, ``group_policy``) are left
out: the rewrite's API has no way to pass them (docs/compatibility.md, Placement)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from reference import vectors

from zun.conf import CONF
from zun.scheduler import claims, placement

_EXTRA_SPEC_PREFIXES = ("resources", "trait:", "group_policy")


def _cases() -> list[Any]:
    out = []
    for i, case in enumerate(vectors()["placement_query"]["cases"]):
        specs = case["input"]["extra_specs"]
        if any(key.startswith(_EXTRA_SPEC_PREFIXES) for key in specs) or "error" in case:
            continue
        out.append(pytest.param(case, id=f"{i}-{case['name']}"))
    return out


@pytest.mark.parametrize("case", _cases())
def test_candidate_query_matches_the_original(case: dict[str, Any]) -> None:
    assert CONF.scheduler.max_placement_results == 1000
    container = case["input"]["container"]
    specs = case["input"]["extra_specs"]
    cpu, memory, disk = container.get("cpu"), container.get("memory"), container.get("disk")
    if memory is not None:
        memory = claims.container_resources(None, memory, None)[1]
    resources = placement.resources_of(cpu, memory, disk)
    nodes = case["input"].get("compute_nodes_for_host")
    requested = specs.get("requested_host")
    in_tree = nodes[0] if requested and nodes and len(nodes) == 1 else None
    limit = placement.query_limit(specs.get("hints"), len(nodes) if requested else None)
    assert (
        placement.candidate_query(resources, in_tree=in_tree, limit=limit)
        == case["output"]["querystring"]
    ), json.dumps(case)


def test_some_cases_are_checked() -> None:
    assert len(_cases()) >= 9
