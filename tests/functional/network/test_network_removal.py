"""A network removed while the engine still releases its last endpoint (real dockerd, with the
slow-release network plugin of ``slow_endpoints``): the node waits for the release instead of
answering the engine's 403 "has active endpoints" as a 400 (or a container being removed as a
409); a container that stays on it is a 409 at once.
Both node paths: the embedded driver's ``delete_network`` and kuryr's ``remove``."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import docker
import pytest
from functional.network.conftest import RUN_ID, TEST_LABEL
from functional.network.slow_endpoints import PLUGIN_DIR, slow_endpoint_driver

from zun.common import exception
from zun.network import docker_network, kuryr_networks, network_removal

pytestmark = pytest.mark.docker

TRIES = 3


@pytest.fixture(scope="module")
def slow_driver() -> Iterator[Any]:
    if not os.access(PLUGIN_DIR if PLUGIN_DIR.exists() else PLUGIN_DIR.parent, os.W_OK):
        reason = f"cannot write a network plugin spec into {PLUGIN_DIR}"
        if os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}:
            pytest.fail(f"{reason} (CI=true: required, not skipped)", pytrace=False)
        pytest.skip(reason)
    with slow_endpoint_driver() as (name, server):
        yield name, server


@pytest.fixture
def make_network(
    docker_client: docker.DockerClient, slow_driver: Any
) -> Iterator[Callable[[], Any]]:
    """A Zun-managed network of the slow driver (what both removal paths look for)."""
    made: list[Any] = []

    def make() -> Any:
        ident = f"zt-slowep-{uuid.uuid4().hex[:10]}"
        made.append(
            docker_client.networks.create(
                ident,
                driver=slow_driver[0],
                labels={
                    docker_network.LABEL_MANAGED: "true",
                    docker_network.LABEL_NEUTRON_NET: ident,
                },
            )
        )
        return made[-1]

    yield make
    for net in made:
        try:
            net.remove()
        except docker.errors.NotFound:
            pass


def _container_on(client: docker.DockerClient, net: Any, image: str) -> Any:
    return client.containers.run(
        image, ["sleep", "300"], network=net.name, detach=True, labels={TEST_LABEL: RUN_ID}
    )


def _listed(net: Any) -> list[str]:
    net.reload()
    return list(net.attrs.get("Containers") or {})


def _remove_in_background(
    container: Any, net: Any, server: Any, phase: str = "released"
) -> threading.Thread:
    """Start the container's removal and return once the engine is releasing its endpoint:
    ``leaving``, the driver's Leave under way (the container still listed on the network),
    or ``released``, the container no longer listed (DeleteEndpoint under way). The engine
    itself refuses the network's removal then."""
    calls = len(server.calls)
    thread = threading.Thread(target=container.remove, kwargs={"force": True})
    thread.start()
    deadline = time.monotonic() + 10
    if phase == "leaving":
        while "Leave" not in [call for _, call in server.calls[calls:]]:
            assert time.monotonic() < deadline, "the engine never called Leave"
            time.sleep(0.02)
        assert container.id in _listed(net)
    else:
        while [key for key in _listed(net) if not key.startswith("ep-")]:
            assert time.monotonic() < deadline, "the container stayed on the network"
            time.sleep(0.05)
    with pytest.raises(docker.errors.APIError) as refused:
        net.remove()
    assert network_removal.endpoints_active(refused.value), refused.value
    return thread


REMOVERS: dict[str, Callable[[docker.DockerClient, Any], bool]] = {
    "embedded": lambda client, net: docker_network.delete_network(client, net.name),
    "kuryr": lambda client, net: kuryr_networks.remove(client, None, net.name),
}


@pytest.mark.parametrize("phase", ["leaving", "released"])
@pytest.mark.parametrize("path", sorted(REMOVERS))
def test_a_delete_during_the_release_waits_for_it(
    docker_client: docker.DockerClient,
    make_network: Callable[[], Any],
    slow_driver: Any,
    busybox_image: str,
    path: str,
    phase: str,
) -> None:
    for _ in range(TRIES):
        net = make_network()
        thread = _remove_in_background(
            _container_on(docker_client, net, busybox_image), net, slow_driver[1], phase
        )
        started = time.monotonic()
        try:
            assert REMOVERS[path](docker_client, net) is True
        finally:
            thread.join()
        assert time.monotonic() - started < network_removal.RELEASE_WAIT
        with pytest.raises(docker.errors.NotFound):
            docker_client.networks.get(net.id)


@pytest.mark.parametrize("path", sorted(REMOVERS))
def test_a_container_on_the_network_is_409_at_once(
    docker_client: docker.DockerClient,
    make_network: Callable[[], Any],
    busybox_image: str,
    path: str,
) -> None:
    net = make_network()
    container = _container_on(docker_client, net, busybox_image)
    started = time.monotonic()
    with pytest.raises(exception.Conflict, match="is in use by containers"):
        REMOVERS[path](docker_client, net)
    assert time.monotonic() - started < 1
    assert docker_client.networks.get(net.id)
    container.remove(force=True)
    assert REMOVERS[path](docker_client, net) is True


def test_endpoints_not_released_in_time_are_a_409(
    docker_client: docker.DockerClient,
    make_network: Callable[[], Any],
    slow_driver: Any,
    busybox_image: str,
) -> None:
    net = make_network()
    thread = _remove_in_background(
        _container_on(docker_client, net, busybox_image), net, slow_driver[1]
    )
    try:
        with pytest.raises(exception.Conflict, match="not released after 0.3 seconds"):
            network_removal.remove(net, net.name, lambda: False, wait=0.3)
        assert docker_client.networks.get(net.id)
    finally:
        thread.join()
    network_removal.remove(net, net.name, lambda: False)
    with pytest.raises(docker.errors.NotFound):
        docker_client.networks.get(net.id)
