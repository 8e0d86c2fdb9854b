"""The multi-node environment itself: separate engines in separate namespaces, all registered."""

from __future__ import annotations

import subprocess

import pytest
from e2e.support import wait_for
from multinode.cluster import Cluster

pytestmark = pytest.mark.multinode


def test_each_node_has_its_own_engine_in_its_own_namespace(cluster: Cluster) -> None:
    ids = set()
    for node in cluster.nodes:
        engine = node.engine()
        try:
            ids.add(engine.info()["DockerRootDir"])
            assert engine.images.get("busybox:latest")
        finally:
            engine.close()
        pid = node.engine_pid()
        assert pid is not None
        # dockerd's network namespace is the node's, not the machine's.
        own = subprocess.run(
            ["ip", "netns", "identify", str(pid)], capture_output=True, text=True, check=True
        ).stdout.strip()
        assert own == node.netns
    assert len(ids) == len(cluster.nodes)

    zun = cluster.client()
    hosts = {h.hostname for h in zun.hosts.list()}
    assert {n.name for n in cluster.nodes} <= hosts
    services = {s.host: s.state for s in zun.services.list() if s.binary == "zun-compute"}
    assert all(services[n.name] == "up" for n in cluster.nodes)


def test_a_container_asked_on_a_node_runs_on_that_nodes_engine(cluster: Cluster) -> None:
    zun = cluster.client("1.39")
    for node in cluster.nodes:
        created = zun.containers.run(
            image="busybox",
            command=["sleep", "300"],
            image_pull_policy="ifnotpresent",
            host=node.name,
        )
        ct = wait_for(zun, created.uuid, "Running")
        assert ct.host == node.name
        engine = node.engine()
        try:
            labels = [
                c.labels.get("zun.container.uuid")
                for c in engine.containers.list(ignore_removed=True)
            ]
        finally:
            engine.close()
        assert ct.uuid in labels
