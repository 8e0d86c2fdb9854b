"""Runs the declarative API specification in ``spec/*.yaml`` (format: docs/api-tests.md).

Each YAML file describes one resource; each entry of ``tests`` is one request and what must come
back, expanded over the roles (``as``) and microversions (``version``) it lists. Every entry is
its own pytest test on a fresh database, seeded from the file's ``fixtures``.

Opt-in extras (file level, an entry may override them): ``bus: recording`` puts a real
in-process message bus under the app with a recording compute node per seeded zun-compute
service, so casts and calls reach a node (``rpc_replies``/``rpc_failures`` say how calls
answer, ``rpc_sent`` what must have been sent); ``policy`` overrides rules as an operator's
policy.yaml would; ``config`` overrides options. ``containers_after`` checks the stored rows;
``then`` lists follow-up requests (same identity and version) with their own expectations.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from unit.api.apptesting import (
    ApiClient,
    RecordingBus,
    RecordingNode,
    Seed,
    config_overrides,
    container_values,
    policy_rules,
)

from zun.common import exception

SPEC_DIR = Path(__file__).parent / "spec"
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
ANY = "$ANY"  # the key must be present, any value
ABSENT = "$ABSENT"  # the key must not be present
VERSION = "$VERSION"  # in an expected string: the effective version (1.1 without a header)
REQUEST_ID = "$REQUEST_ID"  # in an expected string: this reply's x-openstack-request-id
TARGET = "$TARGET."  # $TARGET.<column>: the container the URL names, as stored before the request
_TARGET_PATH = re.compile(r"^(?:/v1)?/containers/([^/?.]+)")
_INDEX = re.compile(r"^\d+$")
#: Settings a file gives for all its entries and an entry may override.
SETUP_KEYS = ("bus", "policy", "config")
#: How long a check that nothing was sent waits for a late cast.
QUIET_PERIOD = 0.1


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _load() -> list[Any]:
    params = []
    for path in sorted(SPEC_DIR.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        for entry in doc["tests"]:
            (method,) = [m for m in METHODS if m in entry]
            setup = {key: entry.get(key, doc.get(key)) for key in SETUP_KEYS}
            for url in _as_list(entry[method]):
                for role in _as_list(entry.get("as", "admin")):
                    for version in _as_list(entry.get("version")):
                        label = f"{path.stem}: {entry['name']} [{method} {url} as {role}" + (
                            f" @{version}]" if version else "]"
                        )
                        one = {**entry, method: url}
                        params.append(
                            pytest.param(
                                doc.get("fixtures", []), setup, one, role, version, id=label
                            )
                        )
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
        return {_substitute(k, values): _substitute(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_substitute(v, values) for v in node]
    return node


def _seed(seed: Seed, fixtures: list[dict[str, Any]]) -> list[str]:
    """Write the fixtures; returns the hosts of the zun-compute services seeded."""
    hosts = []
    for item in fixtures:
        ((kind, values),) = item.items()
        values = dict(values or {})
        getattr(seed, kind)(**values)
        if kind == "service" and values.get("binary", "zun-compute") == "zun-compute":
            hosts.append(values.get("host", "node1"))
    return hosts


def _client(api: ApiClient, role: str, version: str | None) -> ApiClient:
    client = api.anonymous() if role == "anonymous" else api.as_identity(role)
    return client.at(version)


def _bus_hosts(bus: Any, seeded: list[str]) -> list[str] | None:
    """``recording``: a node for each seeded zun-compute service; ``{hosts: [...]}``: those."""
    if bus in (None, "none"):
        return None
    if bus == "recording":
        return seeded
    return list(bus["hosts"])


def _failure(spec: dict[str, Any]) -> BaseException:
    """``{exception: Conflict, message: ...}``: the Zun exception a node raises."""
    cls = getattr(exception, spec["exception"])
    return cls(message=spec["message"]) if "message" in spec else cls(**spec.get("kwargs", {}))


def _program(nodes: dict[str, RecordingNode], entry: dict[str, Any]) -> None:
    for node in nodes.values():
        node.replies.update(entry.get("rpc_replies") or {})
        for method, spec in (entry.get("rpc_failures") or {}).items():
            node.failures[method] = _failure(spec)


def _check_sent(
    nodes: dict[str, RecordingNode], expected: list[dict[str, Any]], request_id: str
) -> None:
    """Each ``{method, host?, kwargs?}`` arrived (kwargs: a subset); ``[]``: nothing did.

    Only messages carrying this request's id count (the bus outlives one test).
    """

    def sent_by_us(node: RecordingNode) -> list[Any]:
        return [m for m in list(node.messages) if m.context.get("request_id") == request_id]

    if not expected:
        time.sleep(QUIET_PERIOD)
        sent = {host: [m.method for m in sent_by_us(node)] for host, node in nodes.items()}
        assert not any(sent.values()), f"nothing should have been sent, got {sent}"
        return
    for item in expected:
        candidates = [nodes[item["host"]]] if "host" in item else list(nodes.values())
        deadline = time.monotonic() + 10
        while True:
            found = [
                m
                for node in candidates
                for m in sent_by_us(node)
                if m.method == item["method"]
                and all(m.kwargs.get(k) == v for k, v in (item.get("kwargs") or {}).items())
            ]
            if found or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        sent = [(m.method, m.kwargs) for node in candidates for m in sent_by_us(node)]
        assert found, f"{item} was not sent; sent: {sent}"


def _check_rows(expected: dict[str, Any]) -> None:
    """``{<uuid or name>: {column: value} | $ABSENT}``."""
    for ident, columns in expected.items():
        stored = container_values(ident)
        if columns == ABSENT:
            assert stored is None, f"container {ident} should be gone: {stored}"
            continue
        assert stored is not None, f"container {ident} is gone"
        for name, value in columns.items():
            assert stored[name] == value, (ident, name, stored[name])


def _target_tokens(url: str) -> dict[str, str]:
    """``$TARGET.uuid``, ``$TARGET.status``...: the container a ``/containers/<ident>`` URL
    names, read before the request (a delete removes it)."""
    match = _TARGET_PATH.match(url)
    stored = container_values(match.group(1)) if match else None
    if stored is None:
        return {}
    return {f"{TARGET}{name}": str(value) for name, value in stored.items()}


class _BusKeeper:
    """One recording bus kept across consecutive tests on the same hosts (module scope)."""

    def __init__(self) -> None:
        self.bus: RecordingBus | None = None

    def get(self, hosts: list[str] | None) -> dict[str, RecordingNode]:
        if self.bus is not None and (hosts is None or self.bus.hosts != tuple(hosts)):
            self.close()
        if hosts is None:
            return {}
        if self.bus is None:
            self.bus = RecordingBus(hosts)
        self.bus.reset()
        return self.bus.nodes

    def close(self) -> None:
        if self.bus is not None:
            bus, self.bus = self.bus, None
            bus.close()


@pytest.fixture(scope="module")
def bus_keeper() -> Iterator[_BusKeeper]:
    keeper = _BusKeeper()
    yield keeper
    keeper.close()


@pytest.mark.parametrize(("fixtures", "setup", "entry", "role", "version"), _load())
def test_spec(
    api: ApiClient,
    seed: Seed,
    bus_keeper: _BusKeeper,
    fixtures: list[dict[str, Any]],
    setup: dict[str, Any],
    entry: dict[str, Any],
    role: str,
    version: str | None,
) -> None:
    with contextlib.ExitStack() as stack:
        if setup["config"]:
            stack.enter_context(config_overrides(setup["config"]))
        if setup["policy"]:
            stack.enter_context(policy_rules(setup["policy"]))
        seeded = _seed(seed, fixtures)
        nodes = bus_keeper.get(_bus_hosts(setup["bus"], seeded))
        _program(nodes, entry)
        _run(api, entry, role, version, nodes)


def _run(
    api: ApiClient,
    entry: dict[str, Any],
    role: str,
    version: str | None,
    nodes: dict[str, RecordingNode],
) -> None:
    (method,) = [m for m in METHODS if m in entry]
    client = _client(api, role, version)
    # Longest names first, so that $TARGET.uuid never eats the start of a longer token.
    tokens = dict(sorted(_target_tokens(entry[method]).items(), key=lambda kv: -len(kv[0])))
    reply = client.request(
        method,
        entry[method],
        json=entry.get("data"),
        headers=entry.get("request_headers"),
        content_type=entry.get("content_type"),
        body=entry["raw_body"].encode() if "raw_body" in entry else None,
    )
    assert reply.status == entry["status"], reply
    effective = {None: "1.1", "latest": "1.41"}.get(version, version)
    entry = _substitute(
        entry,
        {
            VERSION: str(effective),
            REQUEST_ID: reply.headers.get("x-openstack-request-id", ""),
            **tokens,
        },
    )
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
    if "rpc_sent" in entry:
        _check_sent(nodes, entry["rpc_sent"], reply.headers.get("x-openstack-request-id", ""))
    if "containers_after" in entry:
        _check_rows(entry["containers_after"])
    for follow_up in entry.get("then") or []:
        _run(api, follow_up, role, version, nodes)
