"""kuryr's Docker networks on two nodes: their ``network`` rows and their IPAM pools.

On the two-node Neutron fabric (``neutron_cluster``: each node with its own dockerd, Open
vSwitch, OVS agent and kuryr-libnetwork), one Neutron network is used by containers on both
nodes at once. What is checked:

* each node records one ``network`` row for the network (name = the Neutron id, its host,
  the project and user of the container, the Docker network's id), as the original did;
* kuryr-libnetwork's IPAM: with one pool per subnet shared by the nodes (kuryr's own
  ``kuryrPool-<cidr>``), removing the Docker network on node 1 deleted that pool, and the next
  container on node 2 could not get its address. Each node now has a pool of its own
  (``zun-pool-<subnet>-<host>``): node 1's removal, by the API or by hand, leaves node 2
  working;
* ``DELETE /v1/networks/<id>`` removes the Docker network of every host that has a row,
  except where a container still uses it (409, that host's row kept).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import neutron_support
import pytest
import sqlalchemy as sa
from multinode.cluster import Cluster

pytestmark = pytest.mark.neutron

API_VERSION = {"OpenStack-API-Version": "container 1.40"}


@pytest.fixture
def env(neutron_cluster: Cluster, openstack_cloud: Any) -> Iterator[SimpleNamespace]:
    """A fresh Neutron network of the admin's project, the API, and a sweep at the end."""
    assert neutron_cluster.fabric is not None
    neutron = neutron_support.Neutron(openstack_cloud)
    cidr = f"10.253.{neutron_cluster.fabric.octet}.0/24"
    net = neutron.create_network(cidr, name=f"zmn-{neutron_cluster.tag}-rows-net")
    session = neutron_cluster.fabric.cloud.session()
    env = SimpleNamespace(
        neutron=neutron,
        zun=neutron_cluster.client("1.40"),
        session=session,
        net=net["network"],
        subnet=net["subnet"],
        containers=[],
        db=sa.create_engine(neutron_cluster.db_url, poolclass=sa.pool.NullPool),
        url=neutron_cluster.url,
        cluster=neutron_cluster,
    )
    try:
        yield env
    finally:
        try:
            neutron_cluster.delete_containers(env.zun, env.containers, stop=True)
            with env.db.begin() as conn:
                conn.execute(
                    sa.text("DELETE FROM network WHERE neutron_net_id = :n"), {"n": env.net["id"]}
                )
        finally:
            for node in neutron_cluster.nodes:
                for docker_net in node.engine().networks.list(names=[env.net["id"]]):
                    if docker_net.name == env.net["id"]:
                        docker_net.remove()
            neutron.cleanup([env.net["id"]])
            env.db.dispose()


def _run(env: SimpleNamespace, host: str) -> Any:
    """A busybox container on the network, on ``host``; returns it once settled."""
    created = env.zun.containers.run(
        name=f"zmn-{uuid.uuid4().hex[:8]}",
        image="busybox",
        command=["sleep", "600"],
        image_pull_policy="ifnotpresent",
        host=host,
        nets=[{"network": env.net["id"]}],
    )
    env.containers.append(created.uuid)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ct = env.zun.containers.get(created.uuid)
        if ct.status not in ("Creating", "Created") and not ct.task_state:
            return ct
        time.sleep(0.5)
    raise AssertionError(f"container {created.uuid} still {ct.status}")


def _running(env: SimpleNamespace, host: str) -> Any:
    ct = _run(env, host)
    assert ct.status == "Running", (host, ct.status, ct.status_reason)
    return ct


def _delete(env: SimpleNamespace, ct: Any) -> None:
    env.cluster.delete_containers(env.zun, [ct.uuid], stop=True)
    env.containers.remove(ct.uuid)


def _rows(env: SimpleNamespace) -> dict[str, dict[str, Any]]:
    """The ``network`` rows of the test's network, by host."""
    with env.db.connect() as conn:
        found = (
            conn.execute(
                sa.text(
                    "SELECT uuid, name, host, project_id, user_id, network_id, neutron_net_id "
                    "FROM network WHERE neutron_net_id = :n"
                ),
                {"n": env.net["id"]},
            )
            .mappings()
            .all()
        )
    return {row["host"]: dict(row) for row in found}


def _docker_net(node: Any, net_id: str) -> Any:
    found = [n for n in node.engine().networks.list(names=[net_id]) if n.name == net_id]
    return found[0] if found else None


def _delete_network(env: SimpleNamespace) -> Any:
    return env.session.delete(
        f"{env.url}/v1/networks/{env.net['id']}", headers=API_VERSION, raise_exc=False
    )


def test_each_node_records_its_network_and_has_its_own_pool(
    neutron_cluster: Cluster, env: SimpleNamespace
) -> None:
    node1, node2 = neutron_cluster.nodes
    # Both nodes make their Docker network for the network at the same time.
    started: dict[str, Any] = {}
    threads = [
        threading.Thread(target=lambda n=n: started.update({n.name: _run(env, n.name)}))
        for n in (node1, node2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for node in (node1, node2):
        assert started[node.name].status == "Running", started[node.name].status_reason

    rows = _rows(env)
    assert set(rows) == {node1.name, node2.name}
    project = env.session.get_project_id()
    user = env.session.get_user_id()
    pools = set()
    for node in (node1, node2):
        docker_net = _docker_net(node, env.net["id"])
        row = rows[node.name]
        assert (row["name"], row["neutron_net_id"], row["network_id"]) == (
            env.net["id"],
            env.net["id"],
            docker_net.id,
        )
        assert (row["project_id"], row["user_id"]) == (project, user)
        (pool_id,) = [
            v for k, v in docker_net.attrs["IPAM"]["Options"].items() if k == "neutron.pool.uuid"
        ]
        pools.add(pool_id)
    assert {p["id"] for p in env.neutron.zun_pools([env.net["id"]])} == pools
    assert len(pools) == 2

    # Node 1's container goes; removing node 1's Docker network by hand (as an operator
    # might) must not take anything node 2 uses: node 2 starts another container.
    _delete(env, started[node1.name])
    _docker_net(node1, env.net["id"]).remove()
    again = _running(env, node2.name)
    assert again.addresses[env.net["id"]][0]["addr"]


def test_delete_removes_every_node_network_but_one_in_use(
    neutron_cluster: Cluster, env: SimpleNamespace
) -> None:
    node1, node2 = neutron_cluster.nodes
    first = _running(env, node1.name)
    kept = _running(env, node2.name)
    _delete(env, first)
    assert set(_rows(env)) == {node1.name, node2.name}

    # Node 2's container still uses the network there: a 409; node 1's went, with its row
    # and its pool.
    resp = _delete_network(env)
    assert resp.status_code == 409, resp.text
    assert _docker_net(node1, env.net["id"]) is None
    assert set(_rows(env)) == {node2.name}
    (pool,) = env.neutron.zun_pools([env.net["id"]])
    assert pool["name"].endswith(f"-{node2.name}")

    # Node 2 goes on: its running container kept its port, a new one starts there, and
    # node 1 makes its network (and row) again for a new container.
    port = env.neutron.ports(network_id=env.net["id"], device_id=kept.uuid)
    assert [p["status"] for p in port] == ["ACTIVE"]
    _running(env, node2.name)
    again = _running(env, node1.name)
    assert set(_rows(env)) == {node1.name, node2.name}

    for ct in list(env.containers):
        _delete(env, env.zun.containers.get(ct))
    resp = _delete_network(env)
    assert resp.status_code == 204, resp.text
    assert _rows(env) == {}
    assert _docker_net(node1, env.net["id"]) is None and _docker_net(node2, env.net["id"]) is None
    assert env.neutron.zun_pools([env.net["id"]]) == []
    assert again.uuid not in env.containers
