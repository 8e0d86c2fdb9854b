"""Image pulls by policy (zun.image.service), deletes and v2 registry search, against the
real engine and the local registries of scripts/test-images.sh (127.0.0.1:5000 open,
127.0.0.1:5001 basic auth).

Each run pushes its own repositories, so that nothing another test pulls or deletes at the
same time can change what this one sees; they are removed again at the end.
"""

from __future__ import annotations

import base64
import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import docker
import docker.auth
import pytest
import requests

from zun.common import exception
from zun.image import docker_driver, registry, service
from zun.runtime.docker.client import make_client

pytestmark = pytest.mark.docker

RUN_ID = uuid.uuid4().hex[:12]
REPO = f"zun-test-{RUN_ID}/busybox"


@pytest.fixture(scope="module")
def api(docker_client: Any) -> Iterator[docker.APIClient]:
    client = make_client()
    yield client
    client.close()


def _push(
    api: docker.APIClient, source: str, target_repo: str, auth: dict[str, str] | None
) -> None:
    api.tag(source, target_repo, "latest")
    try:
        for event in api.push(
            target_repo, tag="latest", stream=True, decode=True, auth_config=auth
        ):
            assert "error" not in event, event
    finally:
        api.remove_image(f"{target_repo}:latest")


def _delete_from_registry(address: str, repo: str, auth: tuple[str, str] | None) -> None:
    base = f"http://{address}/v2/{repo}/manifests/latest"
    head = requests.head(
        base,
        auth=auth,
        timeout=10,
        headers={"Accept": "application/vnd.docker.distribution.manifest.v2+json"},
    )
    digest = head.headers.get("Docker-Content-Digest")
    if head.ok and digest:
        requests.delete(f"http://{address}/v2/{repo}/manifests/{digest}", auth=auth, timeout=10)


@pytest.fixture(scope="module")
def open_repo(api: docker.APIClient, registry: dict[str, str], busybox_image: str) -> Iterator[str]:
    repo = f"{registry['url']}/{REPO}"
    _push(api, busybox_image, repo, None)
    yield repo
    _delete_from_registry(registry["url"], REPO, None)


@pytest.fixture(scope="module")
def private_repo(
    api: docker.APIClient, private_registry: dict[str, str], busybox_image: str
) -> Iterator[tuple[str, dict[str, str]]]:
    auth = {"username": private_registry["username"], "password": private_registry["password"]}
    repo = f"{private_registry['url']}/{REPO}"
    _push(api, busybox_image, repo, auth)
    yield repo, auth
    _delete_from_registry(private_registry["url"], REPO, (auth["username"], auth["password"]))


@pytest.fixture
def local_cleanup(api: docker.APIClient) -> Iterator[list[str]]:
    """Image references to remove from the engine after the test."""
    refs: list[str] = []
    yield refs
    for ref in refs:
        docker_driver.delete_image(api, ref, force=True)


def test_pull_always_then_ifnotpresent(
    api: docker.APIClient, open_repo: str, local_cleanup: list[str]
) -> None:
    local_cleanup.append(f"{open_repo}:latest")
    first = service.ensure_present(api, open_repo, "latest", "always")
    assert first["pulled"] is True
    assert first["image_id"].startswith("sha256:")
    assert first["size"] > 0
    assert (first["repo"], first["tag"]) == (open_repo, "latest")

    again = service.ensure_present(api, open_repo, "latest", "ifnotpresent")
    assert again["pulled"] is False
    assert again["image_id"] == first["image_id"]

    assert service.ensure_present(api, open_repo, "latest", "always")["pulled"] is True
    # Unset policy means always.
    assert service.ensure_present(api, open_repo, "latest", None)["pulled"] is True


def test_pull_never(
    api: docker.APIClient, open_repo: str, busybox_image: str, local_cleanup: list[str]
) -> None:
    with pytest.raises(exception.ImageNotFound) as info:
        service.ensure_present(api, open_repo, "latest", "never")
    assert info.value.code == 400
    assert str(info.value) == (
        f"Image {open_repo}:latest is not present on this node and the "
        "image pull policy 'never' does not allow pulling it."
    )
    repo, tag = busybox_image.split(":")
    present = service.ensure_present(api, repo, tag, "never")
    assert present["pulled"] is False


def test_ifnotpresent_pulls_an_absent_image(
    api: docker.APIClient, open_repo: str, local_cleanup: list[str]
) -> None:
    local_cleanup.append(f"{open_repo}:latest")
    docker_driver.delete_image(api, f"{open_repo}:latest", force=True)
    assert service.ensure_present(api, open_repo, "latest", "ifnotpresent")["pulled"] is True


def test_pull_of_a_missing_image_gives_the_engine_reason(
    api: docker.APIClient, registry: dict[str, str]
) -> None:
    repo = f"{registry['url']}/zun-test-{RUN_ID}/does-not-exist"
    with pytest.raises(exception.ImageNotFound) as info:
        service.ensure_present(api, repo, "latest", "always")
    assert str(info.value).startswith(f"Image {repo}:latest could not be found: ")
    assert "manifest unknown" in str(info.value)


def test_pull_from_an_unreachable_registry(api: docker.APIClient) -> None:
    # Nothing listens on this loopback port.
    with pytest.raises(exception.DockerError) as info:
        service.ensure_present(api, "127.0.0.1:5999/nothing", "latest", "always")
    assert "127.0.0.1:5999" in str(info.value)


def test_private_pull_needs_and_uses_credentials(
    api: docker.APIClient,
    private_repo: tuple[str, dict[str, str]],
    local_cleanup: list[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    repo, auth = private_repo
    local_cleanup.append(f"{repo}:latest")
    with pytest.raises(exception.DockerError) as info:
        service.ensure_present(api, repo, "latest", "always")
    assert "auth" in str(info.value).lower()

    wrong = {"username": auth["username"], "password": "not-the-password"}
    with pytest.raises(exception.DockerError):
        service.ensure_present(api, repo, "latest", "always", registry_auth=wrong)

    caplog.set_level(logging.DEBUG)  # every logger, docker-py and urllib3 included
    pulled = service.ensure_present(api, repo, "latest", "always", registry_auth=auth)
    assert pulled["pulled"] is True

    password = auth["password"]
    secrets = {
        password,
        base64.b64encode(password.encode()).decode(),
        docker.auth.encode_header(auth).decode(),
        base64.b64encode(json.dumps(auth).encode()).decode(),
    }
    assert caplog.records, "the pull logged nothing: this test would prove nothing"
    for record in caplog.records:
        text = record.getMessage()
        for secret in secrets:
            assert secret not in text, f"credential leaked in log: {record.name}"


def test_delete_image(api: docker.APIClient, open_repo: str) -> None:
    service.ensure_present(api, open_repo, "latest", "always")
    ref = f"{open_repo}:latest"
    assert docker_driver.inspect_image(api, ref) is not None
    assert docker_driver.delete_image(api, ref) is True
    assert docker_driver.inspect_image(api, ref) is None
    assert docker_driver.delete_image(api, ref) is False


def test_list_images(api: docker.APIClient, busybox_image: str) -> None:
    tags = {tag for row in docker_driver.list_images(api) for tag in row.get("RepoTags") or []}
    assert busybox_image in tags


def test_search_open_registry(open_repo: str, registry: dict[str, str]) -> None:
    results = registry_search(f"zun-test-{RUN_ID}", registry["url"])
    assert results == [
        {
            "name": open_repo,
            "description": "",
            "is_official": False,
            "is_automated": False,
            "star_count": 0,
            "tags": ["latest"],
        }
    ]
    assert registry_search(REPO, registry["url"], exact_match=True)[0]["name"] == open_repo
    # The registry's domain and a tag in the term are understood.
    assert registry_search(f"{open_repo}:latest", registry["url"], exact_match=True)
    assert registry_search(f"zun-test-{RUN_ID}", registry["url"], exact_match=True) == []
    assert registry_search(f"no-such-{RUN_ID}", registry["url"]) == []


def test_search_private_registry(
    private_repo: tuple[str, dict[str, str]], private_registry: dict[str, str]
) -> None:
    repo, auth = private_repo
    found = registry_search(REPO, private_registry["url"], auth=auth, exact_match=True)
    assert [r["name"] for r in found] == [repo]
    with pytest.raises(exception.NotAuthorized):
        registry_search(REPO, private_registry["url"])
    with pytest.raises(exception.NotAuthorized):
        registry_search(
            REPO, private_registry["url"], auth={"username": auth["username"], "password": "wrong"}
        )


def test_search_unreachable_registry() -> None:
    with pytest.raises(exception.ConnectionFailed) as info:
        registry_search("busybox", "127.0.0.1:5999", timeout=3)
    assert "127.0.0.1:5999" in str(info.value)


def registry_search(term: str, address: str, **kwargs: Any) -> list[dict[str, Any]]:
    return registry.search_image(term, address, **kwargs)
