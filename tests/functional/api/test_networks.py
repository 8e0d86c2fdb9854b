"""/v1/networks end to end: the API app, a real zun-compute agent on the in-process bus and
the real Docker engine (embedded networks)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import docker
import pytest
import sqlalchemy as sa
from functional.api.resources_support import agent, bus  # noqa: F401
from unit.api.apptesting import ApiClient, Seed

from zun.db import engine, models

VIEW_KEYS = ["uuid", "name", "project_id", "user_id", "network_id", "neutron_net_id"]


@pytest.fixture
def net_id(docker_client: docker.DockerClient) -> Iterator[str]:
    """A network ID unique to the test; its Docker network is removed afterwards."""
    ident = f"zt-net-{uuid.uuid4().hex[:10]}"
    yield ident
    for net in docker_client.networks.list(names=[ident]):
        for container in net.attrs.get("Containers") or {}:
            net.disconnect(container, force=True)
        net.remove()


def _rows(ident: str) -> list[models.Network]:
    with engine.transaction(readonly=True) as session:
        return list(
            session.scalars(sa.select(models.Network).where(models.Network.neutron_net_id == ident))
        )


def test_checks_before_any_message(api: ApiClient, seed: Seed) -> None:
    member = api.as_member("project-a")
    r = member.post("/v1/networks", json={"name": "n1", "neutron_net_id": "abc"})
    assert r.status == 403 and r.error["code"] == "container.policy-not-authorized"
    r = member.at("1.27").delete("/v1/networks/abc")
    assert r.status == 403
    admin = api.as_admin()
    r = admin.post("/v1/networks", json={"neutron_net_id": "abc"})
    assert r.status == 400 and "'name' is a required property" in r.error["detail"]
    r = admin.post("/v1/networks", json={"name": "n1"})  # Zun: 500
    assert r.status == 400 and r.error["detail"] == "'neutron_net_id' is a required property"
    r = admin.post("/v1/networks", json={"name": "n1", "neutron_net_id": "abc", "x": 1})
    assert r.status == 400 and r.error["code"] == "container.schema-validation-error"
    assert admin.post("/v1/networks", body=b"{}", content_type="text/plain").status == 415
    # DELETE exists from 1.27 on.
    for version in (None, "1.26"):
        r = admin.at(version).delete("/v1/networks/abc")
        assert r.status == 406, r
    r = admin.at("1.27").delete("/v1/networks/abc")
    assert r.status == 404 and r.error["code"] == "container.network-not-found"


def test_create_without_a_compute_host_is_503(api: ApiClient, bus: None) -> None:
    r = api.as_admin().post("/v1/networks", json={"name": "n1", "neutron_net_id": "abc"})
    assert r.status == 503


def test_create_and_delete_on_the_engine(
    api: ApiClient,
    agent: Any,
    net_id: str,
    docker_client: docker.DockerClient,
) -> None:
    admin = api.as_admin()
    r = admin.post("/v1/networks", json={"name": "my-net", "neutron_net_id": net_id})
    assert r.status == 200, r
    assert "Location" not in r.headers
    view = r.json
    assert sorted(view) == sorted(VIEW_KEYS)
    assert (view["name"], view["neutron_net_id"], view["project_id"]) == (
        "my-net",
        net_id,
        "project-admin",
    )
    net = docker_client.networks.get(view["network_id"])
    assert net.name == net_id
    assert net.attrs["Labels"]["zun.managed"] == "true"
    assert [row.host for row in _rows(net_id)] == [agent.host]

    r = admin.post("/v1/networks", json={"name": "again", "neutron_net_id": net_id})
    assert r.status == 409 and r.error["code"] == "container.network-already-exists"

    r = admin.at("1.27").delete(f"/v1/networks/{net_id}")
    assert r.status == 204 and r.body == b""
    assert _rows(net_id) == []
    with pytest.raises(docker.errors.NotFound):
        docker_client.networks.get(view["network_id"])
    r = admin.at("latest").delete(f"/v1/networks/{net_id}")
    assert r.status == 404


def test_network_in_use_is_not_deleted(
    api: ApiClient,
    agent: Any,
    net_id: str,
    busybox_image: str,
    docker_client: docker.DockerClient,
) -> None:
    admin = api.as_admin()
    view = admin.post("/v1/networks", json={"name": "busy", "neutron_net_id": net_id}).json
    container = docker_client.containers.create(busybox_image, ["sleep", "30"], network=net_id)
    try:
        r = admin.at("1.27").delete(f"/v1/networks/{net_id}")
        assert r.status == 409 and r.error["code"] == "container.conflict-remote", r
        assert len(_rows(net_id)) == 1
        assert docker_client.networks.get(view["network_id"])
    finally:
        container.remove(force=True)
    assert admin.at("1.27").delete(f"/v1/networks/{net_id}").status == 204


def test_a_row_of_a_host_without_compute_service_is_dropped(
    api: ApiClient,
    seed: Seed,
    agent: Any,
    net_id: str,
    docker_client: docker.DockerClient,
) -> None:
    """A host whose zun-compute service was deleted never answers: its row is stale and goes
    with the delete; the live host's network goes as usual."""
    admin = api.as_admin()
    r = admin.post("/v1/networks", json={"name": "zt-n", "neutron_net_id": net_id})
    assert r.status == 200, r
    view = r.json
    seed.network(neutron_net_id=net_id, host="zt-host-gone")
    seed.network(neutron_net_id=net_id, host="")
    assert {row.host for row in _rows(net_id)} == {"", agent.host, "zt-host-gone"}
    r = admin.at("1.27").delete(f"/v1/networks/{net_id}")
    assert r.status == 204, r
    assert _rows(net_id) == []
    with pytest.raises(docker.errors.NotFound):
        docker_client.networks.get(view["network_id"])


@pytest.mark.parametrize(
    "down", [{"seen": 3600}, {"forced_down": True}], ids=["heartbeat-late", "forced-down"]
)
def test_a_row_of_a_down_host_is_kept_and_named(
    api: ApiClient,
    seed: Seed,
    agent: Any,
    net_id: str,
    docker_client: docker.DockerClient,
    down: dict[str, Any],
) -> None:
    """A down host may come back with its Docker network: its row stays, the answer names the
    host (503), the live host's network still goes; once the service is deleted, the row goes."""
    admin = api.as_admin()
    r = admin.post("/v1/networks", json={"name": "zt-n", "neutron_net_id": net_id})
    assert r.status == 200, r
    seed.service("zt-host-down", **down)
    seed.network(neutron_net_id=net_id, host="zt-host-down")
    r = admin.at("1.27").delete(f"/v1/networks/{net_id}")
    assert r.status == 503 and r.error["code"] == "container.host-unreachable", r
    assert "zt-host-down" in r.error["detail"] and "is down" in r.error["detail"], r
    assert [row.host for row in _rows(net_id)] == ["zt-host-down"]
    assert not [n for n in docker_client.networks.list(names=[net_id]) if n.name == net_id]

    r = admin.delete("/v1/services?binary=zun-compute&host=zt-host-down")
    assert r.status == 200, r
    assert admin.at("1.27").delete(f"/v1/networks/{net_id}").status == 204
    assert _rows(net_id) == []
