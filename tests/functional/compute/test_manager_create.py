"""container_create and container_delete on the real engine and a real database.

Every failure must end with: the row in Error with a clear reason, no engine container, no
claim left on the node, no host on the row, and the create event recorded as an Error.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from zun.common import consts, crypt
from zun.db import engine as db_engine
from zun.db import models
from zun.db.queries import containers as container_q
from zun.db.queries import node as node_q

pytestmark = pytest.mark.docker


def _assert_nothing_left(node: Any, uuid_: str) -> models.Container:
    row = node.row(uuid_)
    assert row is not None
    assert row.status == consts.ERROR
    assert row.task_state is None
    assert row.host is None
    assert node.engine_container(uuid_) is None
    cn = node.compute_node()
    assert cn.cpu_used == pytest.approx(0.0, abs=1e-6)
    assert cn.mem_used == 0
    assert ("compute__do_container_create", "Error") in node.events(uuid_)
    return row


@pytest.mark.parametrize("node_db", ["sqlite", "mariadb"], indirect=True)
def test_run_creates_a_running_container_then_delete_removes_everything(node: Any) -> None:
    uuid_, ctx = node.add(labels={"team": "a"})
    node.manager.container_create(ctx, uuid_, run=True)
    node.wait()

    row = node.row(uuid_)
    assert row.status == consts.RUNNING, row.status_reason
    assert row.task_state is None and row.status_reason is None
    network = f"zun-{node.project_id}"
    assert list(row.addresses) == [network]
    assert row.addresses[network][0]["version"] == 4
    engine = node.engine_container(uuid_)
    assert engine.id == row.container_id
    assert engine.status == "running"
    assert engine.labels["zun.container.uuid"] == uuid_
    assert engine.labels["zun.host"] == node.host
    assert engine.labels["team"] == "a"
    assert node.events(uuid_) == [("compute__do_container_create", "Success")]
    assert node.compute_node().cpu_used == pytest.approx(0.1, abs=1e-6)
    assert node.compute_node().mem_used == 32
    with db_engine.transaction(readonly=True) as session:
        image = session.query(models.Image).filter_by(host=node.host).one()
    assert (image.repo, image.tag) == ("busybox", "latest")
    assert image.image_id.startswith("sha256:")

    dctx = node.begin(uuid_, "delete", consts.CONTAINER_DELETING, status=consts.DELETING)
    node.manager.container_delete(dctx, uuid_, force=True, stop_first=False)
    node.wait()
    assert node.row(uuid_) is None
    assert node.engine_container(uuid_) is None
    assert node.compute_node().cpu_used == pytest.approx(0.0, abs=1e-6)
    assert not node.docker.networks.list(names=[network])


def test_create_without_run_is_created(node: Any) -> None:
    uuid_, ctx = node.add()
    node.manager.container_create(ctx, uuid_, run=False)
    node.wait()
    row = node.row(uuid_)
    assert row.status == consts.CREATED
    assert node.engine_container(uuid_).status == "created"


def test_image_that_does_not_exist(node: Any, registry: dict[str, str]) -> None:
    uuid_, ctx = node.add(image=f"{registry['url']}/nosuchimage:1", image_pull_policy="always")
    node.manager.container_create(ctx, uuid_, run=True)
    node.wait()
    row = _assert_nothing_left(node, uuid_)
    assert "nosuchimage" in row.status_reason
    assert "could not be found" in row.status_reason


def test_image_absent_with_policy_never(node: Any) -> None:
    uuid_, ctx = node.add(image="zun-test/absent:never", image_pull_policy="never")
    node.manager.container_create(ctx, uuid_, run=True)
    node.wait()
    row = _assert_nothing_left(node, uuid_)
    assert "does not allow pulling" in row.status_reason


def _registry_row(node: Any, reg: dict[str, str], password: str) -> int:
    with db_engine.transaction() as session:
        row = models.Registry(
            uuid=node.project_id + "-reg",
            name="private",
            domain=reg["url"],
            username=reg["username"],
            password=crypt.encrypt(password),
            project_id=node.project_id,
        )
        session.add(row)
        session.flush()
        return row.id


def test_private_registry_refusing_credentials(
    node: Any, private_registry: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    registry_id = _registry_row(node, private_registry, "wrong-password")
    uuid_, ctx = node.add(
        image="private/busybox:latest", registry_id=registry_id, image_pull_policy="always"
    )
    with caplog.at_level("DEBUG"):
        node.manager.container_create(ctx, uuid_, run=True)
        node.wait()
    row = _assert_nothing_left(node, uuid_)
    assert (
        "unauthorized" in row.status_reason.lower() or "authentication" in row.status_reason.lower()
    ), row.status_reason
    assert "wrong-password" not in caplog.text
    assert "wrong-password" not in row.status_reason


def test_private_registry_with_good_credentials(
    node: Any, private_registry: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    registry_id = _registry_row(node, private_registry, private_registry["password"])
    uuid_, ctx = node.add(
        image="private/busybox:latest", registry_id=registry_id, image_pull_policy="always"
    )
    with caplog.at_level("DEBUG"):
        node.manager.container_create(ctx, uuid_, run=True)
        node.wait()
    try:
        row = node.row(uuid_)
        assert row.status == consts.RUNNING, row.status_reason
        assert private_registry["password"] not in caplog.text
    finally:
        node.manager.container_delete(node.context(), uuid_, force=True)
        node.wait()
        node.docker.images.remove(private_registry["image"], force=True)


def test_command_that_fails_to_start(node: Any) -> None:
    uuid_, ctx = node.add(command=["/no/such/binary"])
    node.manager.container_create(ctx, uuid_, run=True)
    node.wait()
    row = _assert_nothing_left(node, uuid_)
    assert "/no/such/binary" in row.status_reason


def test_docker_refusing_create(node: Any) -> None:
    uuid_, ctx = node.add(cpu_policy="dedicated", cpuset={"cpuset_cpus": "4095"})
    node.manager.container_create(ctx, uuid_, run=True)
    node.wait()
    row = _assert_nothing_left(node, uuid_)
    assert "cpuset" in row.status_reason.lower() or "4095" in row.status_reason


def test_failed_create_keeps_the_network_of_other_containers(node: Any) -> None:
    keeper = node.run()
    uuid_, ctx = node.add(command=["/no/such/binary"])
    node.manager.container_create(ctx, uuid_, run=True)
    node.wait()
    assert node.row(uuid_).status == consts.ERROR
    assert node.docker.networks.list(names=[f"zun-{node.project_id}"])
    assert node.row(keeper).status == consts.RUNNING


def test_volumes_are_made_mounted_and_released(node: Any) -> None:
    content = base64.b64encode(b"hello from zun\n").decode()
    uuid_, ctx = node.add(command=["sh", "-c", "cat /etc/greeting; sleep 300"])
    mounts = [
        {"type": "volume", "size": 1, "destination": "/data"},
        {"type": "bind", "source": content, "destination": "/etc/greeting"},
    ]
    node.manager.container_create(ctx, uuid_, run=True, requested_volumes=mounts)
    node.wait()
    assert node.row(uuid_).status == consts.RUNNING
    engine = node.engine_container(uuid_)
    assert {m["Destination"] for m in engine.attrs["Mounts"]} == {"/data", "/etc/greeting"}
    volume_name = f"zun-{uuid_}-0"
    assert node.docker.volumes.get(volume_name)
    with db_engine.transaction(readonly=True) as session:
        assert len(node_q.volume_records(session, uuid_)) == 2
    result = node.manager.container_exec(node.context(), uuid_, ["cat", "/etc/greeting"])
    assert result["output"] == "hello from zun\n"

    node.manager.container_delete(node.context(), uuid_, force=True)
    node.wait()
    assert not node.docker.volumes.list(filters={"name": volume_name})
    with db_engine.transaction(readonly=True) as session:
        assert node_q.volume_records(session, uuid_) == []
        assert session.query(models.Volume).count() == 0


def test_requested_network(node: Any) -> None:
    name = f"zt-net-{node.project_id}"
    net = node.docker.networks.create(name, labels={"zun.managed": "true"})
    try:
        uuid_, ctx = node.add()
        node.manager.container_create(ctx, uuid_, run=True, requested_networks=[{"network": name}])
        node.wait()
        row = node.row(uuid_)
        assert row.status == consts.RUNNING, row.status_reason
        assert list(row.addresses) == [name]
        node.manager.container_delete(node.context(), uuid_, force=True)
        node.wait()
    finally:
        net.remove()


def test_requested_network_that_does_not_exist(node: Any) -> None:
    uuid_, ctx = node.add()
    node.manager.container_create(
        ctx, uuid_, run=True, requested_networks=[{"network": "zt-no-such-network"}]
    )
    node.wait()
    row = _assert_nothing_left(node, uuid_)
    assert "zt-no-such-network" in row.status_reason


def test_create_of_a_row_deleted_meanwhile_leaves_nothing(node: Any) -> None:
    uuid_, ctx = node.add()
    with db_engine.transaction() as session:
        container_q.destroy(session, uuid_)
    node.manager.container_create(ctx, uuid_, run=True)
    node.wait()
    assert node.engine_container(uuid_) is None


def test_delete_without_force_of_a_running_container_is_an_error(node: Any) -> None:
    uuid_ = node.run()
    ctx = node.begin(uuid_, "delete", consts.CONTAINER_DELETING)
    node.manager.container_delete(ctx, uuid_, force=False, stop_first=False)
    node.wait()
    row = node.row(uuid_)
    assert row.status == consts.ERROR
    assert row.task_state is None
    assert "running" in row.status_reason.lower()
    assert ("compute__do_container_delete", "Error") in node.events(uuid_)
    assert node.engine_container(uuid_) is not None


def test_delete_with_stop_first(node: Any) -> None:
    uuid_ = node.run()
    ctx = node.begin(uuid_, "delete", consts.CONTAINER_DELETING, status=consts.DELETING)
    node.manager.container_delete(ctx, uuid_, force=False, stop_first=True)
    node.wait()
    assert node.row(uuid_) is None
    assert node.engine_container(uuid_) is None


def test_a_network_still_in_use_stays_known_after_a_delete(node: Any) -> None:
    # Known networks are used under the shared lock; forgetting one that is still in use
    # would make every following create look it up again under the exclusive lock.
    network = f"zun-{node.project_id}"
    keeper, gone = node.run(), node.run()
    assert network in node.manager.resources.known_networks
    dctx = node.begin(gone, "delete", consts.CONTAINER_DELETING, status=consts.DELETING)
    node.manager.container_delete(dctx, gone, force=True, stop_first=False)
    node.wait()
    assert node.row(gone) is None
    assert network in node.manager.resources.known_networks  # the keeper is on it
    assert node.row(node.run()).status == consts.RUNNING
    dctx = node.begin(keeper, "delete", consts.CONTAINER_DELETING, status=consts.DELETING)
    node.manager.container_delete(dctx, keeper, force=True, stop_first=False)
    node.wait()
    assert node.row(keeper) is None
