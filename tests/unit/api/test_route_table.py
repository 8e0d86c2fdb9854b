"""The route table against routes.json: every route, every microversion variant, counted.

As Placement does, the registered handlers are counted per route: a forgotten variant (say the
1.25 get_archive handler) or a missing route fails here.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import pytest
from reference import reference_json

from zun.api import app, routing
from zun.api.microversion import MAX_VERSION

#: Routes we serve that the original did not (documented in rest-api.md or ours).
EXTRA_ROUTES = {
    "GET /v1/openapi",  # our OpenAPI document
    "DELETE /v1/services/{}/{}",  # the path form of DELETE /v1/services (rest-api §12)
    "POST /v1/hosts/{}/evacuate",  # 1.41: evacuate a down host (docs/compatibility.md)
    "POST /v1/hosts/{}/purge",  # 1.41: purge a down host
}

_PARAM = re.compile(r"\{\w+\}")


def _reference(name: str) -> Any:
    return reference_json(name)


def _key(method: str, path: str) -> str:
    return f"{method} {_PARAM.sub('{}', path)}"


def _windows(entries: list[tuple[str | None, str | None]]) -> list[tuple[str, str] | None]:
    out = [None if low is None else (low, high) for low, high in entries]
    return sorted(out, key=lambda w: (0, 0) if w is None else tuple(map(int, w[0].split("."))))


#: The original's maximum; its open-ended routes stay open up to ours (1.41 added routes only).
ORIGINAL_MAX = "1.40"


def reference_table() -> dict[str, list[tuple[str, str] | None]]:
    table: dict[str, list[tuple[str | None, str | None]]] = defaultdict(list)
    for entry in _reference("routes.json"):
        high = entry["max_version"]
        if high == ORIGINAL_MAX:
            high = str(MAX_VERSION)
        table[_key(entry["method"], entry["path"])].append((entry["min_version"], high))
    return {k: _windows(v) for k, v in table.items()}


def registered_table() -> dict[str, list[tuple[str, str] | None]]:
    app.load_handlers()
    table: dict[str, list[tuple[str | None, str | None]]] = defaultdict(list)
    for r in routing.registered_routes():
        window = (str(r.min_version), str(r.max_version)) if r.versioned else (None, None)
        table[_key(r.method, r.path)].append(window)
    return {k: _windows(v) for k, v in table.items()}


REFERENCE = reference_table()


def test_reference_counts() -> None:
    """routes.json itself: 63 routes served by 73 handlers (rest-api.md §5)."""
    assert len(REFERENCE) == 63
    assert sum(len(v) for v in REFERENCE.values()) == 73


@pytest.mark.parametrize("route_key", sorted(REFERENCE))
def test_handlers_per_route(route_key: str) -> None:
    registered = registered_table()
    assert route_key in registered, f"no handler for {route_key}"
    assert registered[route_key] == REFERENCE[route_key], (
        f"{route_key}: registered windows {registered[route_key]}, expected {REFERENCE[route_key]}"
    )


def test_no_unknown_routes() -> None:
    unknown = set(registered_table()) - set(REFERENCE) - EXTRA_ROUTES
    assert not unknown, f"routes outside routes.json (add them to EXTRA_ROUTES if meant): {unknown}"


#: Resources whose routes must all be served (kept although every route is now checked above).
COMPLETE_RESOURCES = ("/v1/capsules",)


def test_every_reference_route_is_served() -> None:
    missing = sorted(set(REFERENCE) - set(registered_table()))
    assert not missing, f"routes of routes.json without a handler: {missing}"


@pytest.mark.parametrize("resource", COMPLETE_RESOURCES)
def test_complete_resources_have_every_route(resource: str) -> None:
    """A finished resource never loses a route or a microversion variant silently."""
    wanted = {k: v for k, v in REFERENCE.items() if k.split(" ", 1)[1].startswith(resource)}
    assert wanted, resource
    registered = registered_table()
    assert {k: registered.get(k) for k in wanted} == wanted


def test_no_overlapping_windows() -> None:
    """Two handlers of one route never serve the same version (the choice must be unique)."""
    app.load_handlers()
    by_route: dict[str, list[routing.Route]] = defaultdict(list)
    for r in routing.registered_routes():
        by_route[_key(r.method, r.path)].append(r)
    for key, routes in by_route.items():
        ranked = sorted(routes, key=lambda r: r.min_version)
        for a, b in zip(ranked, ranked[1:], strict=False):
            assert a.max_version < b.min_version, f"{key}: {a.handler} overlaps {b.handler}"


def _versioned_cases() -> list[Any]:
    return [
        pytest.param(c, id=f"{c['input']['controller']}.{c['input']['method']}")
        for c in _reference("vectors.json")["versioned_methods"]["cases"]
    ]


@pytest.mark.parametrize("case", _versioned_cases())
def test_versioned_methods(case: dict[str, Any]) -> None:
    """Each versioned controller method of the original maps to the same windows here."""
    suffix = f"{case['input']['controller']}.{case['input']['method']}"
    keys = {
        _key(e["method"], e["path"])
        for e in _reference("routes.json")
        if e["handler"].endswith(suffix)
    }
    assert keys, suffix
    registered = registered_table()
    expected = sorted(
        (low, str(MAX_VERSION) if high == ORIGINAL_MAX else high) for low, high in case["output"]
    )
    for key in keys:
        assert key in registered, f"no handler for {key}"
        assert sorted(w for w in registered[key] if w) == expected, key
