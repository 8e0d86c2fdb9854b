"""Runs the declarative API specification in ``spec/*.yaml`` (format: docs/api-tests.md).

Each YAML file describes one resource; each entry of ``tests`` is one request and what must come
back, expanded over the roles (``as``) and microversions (``version``) it lists. Every entry is
its own pytest test on a fresh database, seeded from the file's ``fixtures``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from unit.api.apptesting import ApiClient, Seed

SPEC_DIR = Path(__file__).parent / "spec"
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
ANY = "$ANY"          # the key must be present, any value
ABSENT = "$ABSENT"    # the key must not be present
VERSION = "$VERSION"  # in an expected string: the effective version (1.1 without a header)
_INDEX = re.compile(r"^\d+$")


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _load() -> list[Any]:
    params = []
    for path in sorted(SPEC_DIR.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        for entry in doc["tests"]:
            (method,) = [m for m in METHODS if m in entry]
            for url in _as_list(entry[method]):
                for role in _as_list(entry.get("as", "admin")):
                    for version in _as_list(entry.get("version")):
                        label = f"{path.stem}: {entry['name']} [{method} {url} as {role}" + (
                            f" @{version}]" if version else "]")
                        one = {**entry, method: url}
                        params.append(pytest.param(doc.get("fixtures", []), one, role,
                                                   version, id=label))
    return params


def lookup(body: Any, dotted: str) -> Any:
    """``a.0.b`` in a decoded JSON body; raises KeyError when a step is missing."""
    node = body
    for step in dotted.split(".") if dotted else []:
        if isinstance(node, list) and _INDEX.match(step):
            node = node[int(step)]
        elif isinstance(node, dict) and step in node:
            node = node[step]
        else:
            raise KeyError(dotted)
    return node


def _substitute(node: Any, values: dict[str, str]) -> Any:
    if isinstance(node, str):
        for token, value in values.items():
            node = node.replace(token, value)
        return node
    if isinstance(node, dict):
        return {k: _substitute(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_substitute(v, values) for v in node]
    return node


def _seed(seed: Seed, fixtures: list[dict[str, Any]]) -> None:
    for item in fixtures:
        ((kind, values),) = item.items()
        getattr(seed, kind)(**(values or {}))


def _client(api: ApiClient, role: str, version: str | None) -> ApiClient:
    client = api.anonymous() if role == "anonymous" else api.as_identity(role)
    return client.at(version)


@pytest.mark.parametrize(("fixtures", "entry", "role", "version"), _load())
def test_spec(api: ApiClient, seed: Seed, fixtures: list[dict[str, Any]], entry: dict[str, Any],
              role: str, version: str | None) -> None:
    _seed(seed, fixtures)
    (method,) = [m for m in METHODS if m in entry]
    client = _client(api, role, version)
    reply = client.request(method, entry[method], json=entry.get("data"),
                           headers=entry.get("request_headers"),
                           content_type=entry.get("content_type"),
                           body=entry["raw_body"].encode() if "raw_body" in entry else None)
    assert reply.status == entry["status"], reply
    effective = {None: "1.1", "latest": "1.40"}.get(version, version)
    entry = _substitute(entry, {VERSION: str(effective)})
    for name, expected in (entry.get("response_headers") or {}).items():
        if expected == ABSENT:
            assert name not in reply.headers, (name, reply.headers)
        elif expected == ANY:
            assert name in reply.headers, (name, reply.headers)
        else:
            assert reply.headers.get(name) == expected, (name, reply.headers)
    if "response_json" in entry:
        assert reply.json == entry["response_json"], reply
    for dotted, expected in (entry.get("response_json_paths") or {}).items():
        if expected == ABSENT:
            with pytest.raises(KeyError):
                lookup(reply.json, dotted)
            continue
        value = lookup(reply.json, dotted)
        if expected != ANY:
            assert value == expected, (dotted, value, reply)
    for dotted, expected in (entry.get("response_lengths") or {}).items():
        assert len(lookup(reply.json, dotted)) == expected, (dotted, reply)
    for dotted, keys in (entry.get("response_keys") or {}).items():
        assert sorted(lookup(reply.json, dotted)) == sorted(keys), (dotted, reply)
    if "error_code" in entry:
        error = reply.error
        assert error["code"] == entry["error_code"], reply
        assert error["status"] == reply.status
        assert error["request_id"] == reply.headers["x-openstack-request-id"]
    if "error_title" in entry:
        assert reply.error["title"] == entry["error_title"], reply
