"""Fixtures of the multi-node tests (see multinode/cluster.py for what runs).

  multinode_cluster  session: a Cluster of two nodes, started once, torn down at the end
                     (namespaces, dockerds, containers, RabbitMQ vhost, MariaDB database)
  cluster            per test: the same cluster, with every container deleted and the
                     default configuration restored after the test
  neutron_cluster    session: a Cluster of two nodes with Neutron networking (their own Open
                     vSwitch, OVS agent and kuryr-libnetwork, a VXLAN underlay between them:
                     multinode/neutron.py) on the local OpenStack; its tests are marked
                     ``neutron`` too, so ``scripts/run-tests.sh -m neutron`` runs them

Every test using these is marked ``multinode`` (and docker, mariadb, rabbitmq), so
``scripts/run-tests.sh -m multinode`` runs them alone. When the environment cannot be built
the tests are skipped on a developer machine and fail under ``CI=true``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

_TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

from multinode.cluster import Cluster, SetupError, sweep_stale  # noqa: E402


def unavailable(reason: str) -> None:
    """Skip, or fail under CI, where the environment must build (as tests/conftest.py does)."""
    if os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}:
        pytest.fail(f"{reason} (CI=true: the multi-node environment is required)", pytrace=False)
    pytest.skip(reason)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        if str(item.path).startswith(here + os.sep):
            for marker in ("multinode", "docker", "mariadb", "rabbitmq"):
                item.add_marker(marker)


@pytest.fixture(scope="session")
def multinode_cluster(docker_client: Any, busybox_image: str, rabbit_url: str) -> Iterator[Cluster]:
    sweep_stale()
    nodes = Cluster(nodes=2)
    try:
        nodes.start()
    except (SetupError, OSError) as exc:
        try:
            nodes.stop()
        finally:
            unavailable(f"the multi-node environment could not start: {exc}")
    try:
        yield nodes
    finally:
        nodes.stop()


@pytest.fixture(scope="session")
def neutron_cluster(
    docker_client: Any, busybox_image: str, rabbit_url: str, openstack_cloud: Any
) -> Iterator[Cluster]:
    sweep_stale()
    nodes = Cluster(nodes=2, openstack=openstack_cloud)
    try:
        nodes.start()
    except (SetupError, OSError) as exc:
        try:
            nodes.stop()
        finally:
            unavailable(f"the Neutron multi-node environment could not start: {exc}")
    try:
        yield nodes
    finally:
        nodes.stop()


@pytest.fixture
def cluster(multinode_cluster: Cluster) -> Iterator[Cluster]:
    multinode_cluster.reset()
    yield multinode_cluster
    delete_all_containers(multinode_cluster)
    multinode_cluster.reset()


def delete_all_containers(cluster: Cluster, timeout: float = 60) -> None:
    """Force-delete every container through the API, then sweep the engines."""
    from zunclient import exceptions

    zun = cluster.client()
    for ct in zun.containers.list(all_projects=True):
        try:
            zun.containers.delete(ct.uuid, force=True, all_projects=True)
        except exceptions.ClientException:
            pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and zun.containers.list(all_projects=True):
        time.sleep(0.3)
    for node in cluster.nodes:
        node.remove_engine_containers()
