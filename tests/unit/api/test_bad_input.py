"""Bad input never gets a 5xx: nesting, encodings, non-finite numbers, oversized values.

Each case was a 500 (or an accepted-then-broken container) before the bounds of
``zun/api/json_input.py``, ``zun.api.app.check_url`` and the ``[api]`` limits existed. The
fuzz test at the end sweeps depths, encodings and sizes over the routes members reach.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from unit.api.apptesting import ApiClient, Seed, config_overrides, recording_bus

MEMBER = "project-a"


def _nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def _assert_client_error(reply: Any, status: int = 400) -> dict[str, Any]:
    assert reply.status == status, (reply.status, reply.body[:300])
    error = reply.error
    assert error["status"] == status and error["request_id"].startswith("req-")
    assert error["detail"] or error["title"]
    return error


@pytest.fixture
def member(api: ApiClient) -> ApiClient:
    return api.as_member(MEMBER).at("latest")


@pytest.fixture
def container(seed: Seed) -> str:
    return seed.container(project_id=MEMBER, status="Running").uuid


@pytest.mark.parametrize("path", ["/v1/containers", "/v1/capsules"])
def test_deeply_nested_body_is_400(member: ApiClient, path: str) -> None:
    body = '{"image": "busybox", "labels": ' + _nested(50_000) + "}"
    error = _assert_client_error(
        member.post(path, body=body.encode(), content_type="application/json")
    )
    assert "nested more than 32 levels" in error["detail"]


def test_nesting_just_past_the_bound_is_400_and_at_it_is_not(member: ApiClient) -> None:
    with config_overrides({"api": {"max_json_depth": 6}}):
        deep = {"image": "busybox", "labels": {"a": json.loads(_nested(5))}}  # depth 7
        reply = member.post("/v1/containers", json=deep)
        assert "nested more than 6 levels" in _assert_client_error(reply)["detail"]
        ok = {"image": "busybox", "labels": {"a": json.loads(_nested(4))}}  # depth 6
        reply = member.post("/v1/containers", json=ok)
        assert "nested" not in reply.body.decode()


def test_deeply_nested_capsule_template_string_is_400(member: ApiClient) -> None:
    template = '{"spec": ' + _nested(50_000) + "}"
    reply = member.post("/v1/capsules", json={"template": template})
    error = _assert_client_error(reply)
    assert error["code"] == "container.failed-parse-string-to-json"


@pytest.mark.parametrize(
    "url",
    [
        "/v1/containers?marker=%00%ff",
        "/v1/containers?name=%ff%fe",
        "/v1/containers?marker=%00",
        "/v1/containers/%ff%fe",
        "/v1/containers/%ff%fe/logs",
        "/v1/capsules/%c0%af",
        "/v1/images/%ed%a0%80",
    ],
)
def test_invalid_utf8_or_nul_in_url_is_400(member: ApiClient, url: str) -> None:
    error = _assert_client_error(member.get(url))
    assert "UTF-8" in error["detail"] or "NUL" in error["detail"]


@pytest.mark.parametrize("cpu", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_cpu_literal_is_400(member: ApiClient, cpu: str) -> None:
    body = '{"image": "busybox", "cpu": ' + cpu + "}"
    reply = member.post("/v1/containers", body=body.encode(), content_type="application/json")
    _assert_client_error(reply)


@pytest.mark.parametrize("cpu", ["NaN", "nan", "inf", "-inf", "Infinity"])
def test_non_finite_cpu_string_is_400(member: ApiClient, cpu: str) -> None:
    reply = member.post("/v1/containers", json={"image": "busybox", "cpu": cpu})
    error = _assert_client_error(reply)
    assert error["code"] == "container.schema-validation-error"
    assert "finite" in error["detail"]


def test_non_finite_cpu_on_update_is_400(member: ApiClient, container: str) -> None:
    reply = member.patch(f"/v1/containers/{container}", json={"cpu": "NaN"})
    assert "finite" in _assert_client_error(reply)["detail"]


def test_nul_in_a_body_string_is_400(member: ApiClient) -> None:
    reply = member.post("/v1/containers", json={"image": "busybox", "name": "a\u0000b"})
    assert "NUL" in _assert_client_error(reply)["detail"]


def test_huge_execute_command_is_400_at_once(member: ApiClient, container: str) -> None:
    command = "echo " + "a" * 1_000_000
    reply = member.post(f"/v1/containers/{container}/execute", json={"command": command})
    error = _assert_client_error(reply)
    assert "max_exec_command_length" in error["detail"]


def test_execute_command_bound_is_configurable(member: ApiClient, container: str) -> None:
    with config_overrides({"api": {"max_exec_command_length": 10}}):
        reply = member.post(
            f"/v1/containers/{container}/execute", json={"command": "echo 12345678"}
        )
    assert "at most 10" in _assert_client_error(reply)["detail"]


@pytest.mark.parametrize("path", ["", "a" * 5000, "/tmp/" + "b" * 300, "/tmp/a\u0000b"])
@pytest.mark.parametrize("action", ["get_archive", "put_archive"])
def test_bad_archive_path_is_400(member: ApiClient, container: str, path: str, action: str) -> None:
    url = f"/v1/containers/{container}/{action}"
    if action == "get_archive":
        reply = member.get(url, json={"path": path})
    else:
        reply = member.post(url, json={"path": path, "data": ""})
    error = _assert_client_error(reply)
    # A NUL is refused with the body itself (any string of any body); the rest by the route.
    assert error["code"] == ("container." if "\x00" in path else "container.invalid-value")


def test_archive_path_bound_is_configurable(member: ApiClient, container: str) -> None:
    with config_overrides({"api": {"max_archive_path_length": 8}}):
        reply = member.get(f"/v1/containers/{container}/get_archive?path=/tmp/abcdef")
    assert "max_archive_path_length" in _assert_client_error(reply)["detail"]


def _tar(*members: tuple[str, str, str | bytes]) -> str:
    """base64 of a tar of (kind, name, data or link target) members."""
    import base64
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as archive:
        for kind, name, value in members:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(value)
                archive.addfile(info, io.BytesIO(value))  # type: ignore[arg-type]
            else:
                info.type = tarfile.SYMTYPE if kind == "symlink" else tarfile.LNKTYPE
                info.linkname = str(value)
                archive.addfile(info)
    return base64.b64encode(buf.getvalue()).decode()


@pytest.mark.parametrize(
    "data",
    [
        "aGVsbG8gd29ybGQsIG5vdCBhIHRhcg==",  # not a tar
        "",  # nothing
        _tar(("symlink", "up", "../../.."), ("file", "up/tmp/x", b"x")),  # climbs out
        _tar(("symlink", "evil", "/etc"), ("file", "evil/passwd", b"x")),  # writes through
        _tar(("file", "../x", b"x")),  # outside
        _tar(("hardlink", "h", "../../etc/passwd")),  # hard link out
    ],
)
def test_put_archive_that_the_engine_cannot_extract_is_400(
    member: ApiClient, container: str, data: str
) -> None:
    reply = member.post(
        f"/v1/containers/{container}/put_archive", json={"path": "/tmp", "data": data}
    )
    error = _assert_client_error(reply)
    assert error["code"] in ("container.bad-archive", "container.schema-validation-error")


def test_put_archive_accepts_links_inside_the_container(
    member: ApiClient, container: str, seed: Seed
) -> None:
    seed.service("node1")
    seed.compute_node("node1", cpus=4, cpu_used=0.0, mem_total=8192, mem_used=0, disk_used=0)
    data = _tar(
        ("file", "bin/tool", b"#!/bin/sh\n"),
        ("symlink", "bin/t", "tool"),
        ("symlink", "abs", "/usr/bin/env"),
        ("hardlink", "bin/t2", "bin/tool"),
    )
    with recording_bus(["node1"]) as nodes:
        reply = member.post(
            f"/v1/containers/{container}/put_archive", json={"path": "/tmp", "data": data}
        )
        assert reply.status == 200, reply.body
        assert nodes["node1"].methods() == ["container_put_archive"]


def test_put_archive_data_that_is_not_text_is_400(member: ApiClient, container: str) -> None:
    reply = member.at("1.24").post(
        f"/v1/containers/{container}/put_archive", json={"path": "/tmp", "data": 12}
    )
    _assert_client_error(reply)


# --- fuzz: depth x encoding x size over the routes a member reaches ----------------------------

_ROUTES = [
    ("POST", "/v1/containers"),
    ("POST", "/v1/capsules"),
    ("GET", "/v1/containers"),
    ("PATCH", "/v1/containers/{c}"),
    ("POST", "/v1/containers/{c}/execute"),
    ("GET", "/v1/containers/{c}/get_archive"),
    ("POST", "/v1/containers/{c}/put_archive"),
    ("POST", "/v1/containers/{c}/commit"),
    ("GET", "/v1/containers/{c}/top"),
    ("POST", "/v1/containers/{c}/rename"),
    ("POST", "/v1/registries"),
    ("GET", "/v1/images"),
    ("POST", "/v1/containers/{c}/kill"),
]
_FIELDS = [
    "image",
    "name",
    "command",
    "cpu",
    "memory",
    "labels",
    "environment",
    "path",
    "data",
    "repository",
    "tag",
    "ps_args",
    "signal",
    "template",
    "registry",
    "marker",
    "limit",
    "sort_key",
]


def _bad_bytes(rng: random.Random, size: int) -> bytes:
    kind = rng.choice(["latin1", "utf16", "overlong", "surrogate", "nul", "random", "ascii"])
    if kind == "latin1":
        return "é".encode("latin-1") * size
    if kind == "utf16":
        return "zun".encode("utf-16")[: size + 2]
    if kind == "overlong":
        return b"\xc0\xaf" * max(1, size // 2)
    if kind == "surrogate":
        return b"\xed\xa0\x80" * max(1, size // 3)
    if kind == "nul":
        return b"a\x00b"
    if kind == "random":
        return bytes(rng.randrange(256) for _ in range(min(size, 4096)))
    return b"a" * size


def _value(rng: random.Random, depth: int, size: int) -> Any:
    choice = rng.randrange(8)
    if choice == 0:
        return json.loads(_nested(min(depth, 300)))
    if choice == 1:
        return "x" * size
    if choice == 2:
        return rng.choice([float("1e308"), -1, 0, 2**70, True, None])
    if choice == 3:
        return {"k" * min(size, 5000): "v"}
    if choice == 4:
        return ["a"] * min(size, 10_000)
    if choice == 5:
        return rng.choice(["NaN", "Infinity", "-0", "1e999", "0x10", " 1 "])
    if choice == 6:
        return "\udcff".encode("utf-8", "surrogatepass").decode("latin-1")
    return "".join(chr(rng.randrange(1, 0x2FFF)) for _ in range(min(size, 500)))


def test_fuzz_depth_encodings_sizes_never_5xx(
    member: ApiClient, container: str, seed: Seed
) -> None:
    # A node answering on the bus, so that calls and casts reach it as in the service.
    seed.service("node1")
    seed.compute_node("node1", cpus=4, cpu_used=0.0, mem_total=8192, mem_used=0, disk_used=0)
    with recording_bus(["node1"]):
        _fuzz(member, container)


def _fuzz(member: ApiClient, container: str) -> None:
    rng = random.Random(20261201)
    depths = [1, 2, 7, 31, 32, 33, 64, 1000, 100_000]
    sizes = [0, 1, 255, 256, 4096, 4097, 70_000, 1_000_000]
    seen: dict[int, int] = {}
    for round_ in range(400):
        method, template = rng.choice(_ROUTES)
        url = template.format(c=container)
        kind = round_ % 4
        body: bytes | None = None
        if kind == 0:  # a raw body nested to some depth, sometimes broken off
            depth = rng.choice(depths)
            text = '{"image": "busybox", "' + rng.choice(_FIELDS) + '": ' + _nested(depth) + "}"
            body = text.encode()[: rng.choice([None, len(text) // 2])]
        elif kind == 1:  # JSON values of every shape and size in known fields
            size = rng.choice(sizes)
            doc = {
                rng.choice(_FIELDS): _value(rng, rng.choice(depths), size)
                for _ in range(rng.randrange(1, 4))
            }
            body = json.dumps(doc).encode()
        elif kind == 2:  # bytes that are not UTF-8 (or not JSON) as the body
            body = b'{"image": "' + _bad_bytes(rng, rng.choice(sizes[:6])) + b'"}'
        else:  # bad encodings in the query string and in the path
            raw = _bad_bytes(rng, rng.choice(sizes[:5]))
            quoted = "".join(f"%{b:02x}" for b in raw)
            if rng.random() < 0.5:
                url = f"{url}?{rng.choice(_FIELDS)}={quoted}"
            else:
                url = (
                    url.replace(container, quoted or "%ff")
                    if "{c}" in template
                    else f"{url}/{quoted or '%ff'}"
                )
        reply = member.request(
            method, url, body=body, content_type="application/json" if body is not None else None
        )
        seen[reply.status] = seen.get(reply.status, 0) + 1
        assert reply.status < 500, (method, url[:200], (body or b"")[:200], reply.body[:400])
        if reply.status >= 400:
            assert reply.error["request_id"].startswith("req-")
    # The sweep reached the handlers, not only the URL check.
    assert len(seen) >= 3, seen
