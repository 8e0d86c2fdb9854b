"""Engine-side refusals and outages reach the client as 4xx or 503, never 500.

A zun-all drives a Docker engine of its own (``tests/own_engine.py``), so the test can stop
that engine without touching the machine's: with the engine down, ``logs`` (and the other
calls) answer 503 with the host named, or 409 once the node's heartbeat reported the engine
down. With it up, the engine's refusals of ``top`` arguments, of archive paths and of
archives are 400s.
"""

from __future__ import annotations

import base64
import io
import json
import tarfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import own_engine
import pytest
from e2e.support import ZunAll, wait_for

pytestmark = pytest.mark.e2e


def http(server: ZunAll, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        server.url + path,
        data=data,
        method=method,
        headers={"Content-Type": "application/json", "OpenStack-API-Version": "container 1.40"},
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            raw = resp.read()
            return resp.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as err:
        raw = err.read()
        return err.code, json.loads(raw) if raw else None


@pytest.fixture(scope="module")
def engine(docker_client: Any, busybox_image: str) -> Iterator[own_engine.OwnEngine]:
    own_engine.require()
    own = own_engine.OwnEngine()
    try:
        own.start()
        own.load_image(docker_client, busybox_image)
        yield own
    finally:
        own.destroy()


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, engine: own_engine.OwnEngine
) -> Iterator[ZunAll]:
    base: Path = tmp_path_factory.mktemp("engine-errors")
    zun = ZunAll(base)
    zun.config.write_text(zun.config.read_text() + f"[docker]\napi_url = {engine.url}\n")
    zun.start()
    try:
        yield zun
    finally:
        zun.stop()


@pytest.fixture(scope="module")
def container(server: ZunAll, busybox_image: str) -> str:
    status, body = http(
        server,
        "POST",
        "/v1/containers?run=true",
        {"image": busybox_image, "image_pull_policy": "ifnotpresent", "command": ["sleep", "3600"]},
    )
    assert status == 202, body
    wait_for(server.client(), body["uuid"], "Running", timeout=120)
    return body["uuid"]


def _tar(**links: str) -> str:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as archive:
        for name, target in links.items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)
    return base64.b64encode(buf.getvalue()).decode()


@pytest.mark.parametrize("ps_args", ["--bogus", "x y z"])
def test_top_with_arguments_ps_rejects_is_400(server: ZunAll, container: str, ps_args: str) -> None:
    status, body = http(
        server, "GET", f"/v1/containers/{container}/top?ps_args=" + urllib.parse.quote(ps_args)
    )
    assert status == 400, body
    assert "ps" in body["errors"][0]["detail"]


def test_archive_refusals_of_the_engine_are_400(server: ZunAll, container: str) -> None:
    # A path the API accepts but the container's filesystem does not have.
    status, body = http(server, "GET", f"/v1/containers/{container}/get_archive?path=/nope")
    assert status == 404, body
    # A link to a directory the archive then extracts over: the engine refuses it.
    status, body = http(
        server,
        "POST",
        f"/v1/containers/{container}/put_archive",
        {"path": "/tmp", "data": _tar(d="/")},
    )
    assert status == 200, body
    status, body = http(
        server,
        "POST",
        f"/v1/containers/{container}/put_archive",
        {"path": "/tmp/d", "data": _tar(x="y")},
    )
    assert status < 500, body


def test_calls_while_the_engine_is_down_are_503(
    server: ZunAll, container: str, engine: own_engine.OwnEngine
) -> None:
    engine.stop()
    try:
        for method, path in (
            ("GET", "logs"),
            ("GET", "top"),
            ("GET", "stats"),
            ("GET", "get_archive?path=/etc/hostname"),
            ("POST", "execute?command=true"),
        ):
            status, body = http(server, method, f"/v1/containers/{container}/{path}")
            # 503 from the node when the call reaches it; 409 at once from the API when the
            # node's heartbeat has already reported its engine down.
            assert status in (409, 503), (path, status, body)
            error = body["errors"][0]
            assert "engine" in error["detail"].lower(), error
            if status == 503:
                assert server.host in error["detail"], error
    finally:
        engine.start()
