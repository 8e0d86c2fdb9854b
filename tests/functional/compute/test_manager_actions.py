"""Lifecycle actions and calls of the node on the real engine: the status written after each
action is the engine's (through the status mapping), and show agrees with the stored row."""

from __future__ import annotations

import base64
import io
import tarfile
import time
from typing import Any

import pytest
import sqlalchemy as sa

from zun.common import consts, exception
from zun.console import tokens as console_tokens
from zun.db import engine as db_engine
from zun.db import models

pytestmark = pytest.mark.docker


def _act(
    node: Any, uuid_: str, action: str, task: str, method: str, *args: Any, **extra: Any
) -> models.Container:
    ctx = node.begin(uuid_, action, task, **extra)
    getattr(node.manager, method)(ctx, uuid_, *args)
    node.wait()
    row = node.row(uuid_)
    assert row.task_state is None
    assert (f"compute__do_container_{action}", "Success") in node.events(uuid_), node.events(uuid_)
    return row


def _shown_equals_stored(node: Any, uuid_: str) -> None:
    shown = node.manager.container_show(node.context(), uuid_)
    row = node.row(uuid_)
    assert shown["status"] == row.status
    assert shown["addresses"] == row.addresses


def test_lifecycle(node: Any) -> None:
    uuid_ = node.run()
    engine = node.engine_container(uuid_)

    row = _act(node, uuid_, "stop", consts.CONTAINER_STOPPING, "container_stop", 0)
    assert row.status == consts.STOPPED
    engine.reload()
    assert engine.status == "exited"
    _shown_equals_stored(node, uuid_)

    row = _act(node, uuid_, "start", consts.CONTAINER_STARTING, "container_start")
    assert row.status == consts.RUNNING
    _shown_equals_stored(node, uuid_)

    row = _act(node, uuid_, "pause", consts.CONTAINER_PAUSING, "container_pause")
    assert row.status == consts.PAUSED
    engine.reload()
    assert engine.status == "paused"

    row = _act(node, uuid_, "unpause", consts.CONTAINER_UNPAUSING, "container_unpause")
    assert row.status == consts.RUNNING

    started = node.engine_container(uuid_).attrs["State"]["StartedAt"]
    row = _act(
        node,
        uuid_,
        "reboot",
        consts.CONTAINER_REBOOTING,
        "container_reboot",
        0,
        status=consts.RESTARTING,
    )
    assert row.status == consts.RUNNING
    assert node.engine_container(uuid_).attrs["State"]["StartedAt"] != started

    row = _act(node, uuid_, "kill", consts.CONTAINER_KILLING, "container_kill", None)
    assert row.status == consts.STOPPED
    _shown_equals_stored(node, uuid_)


def test_kill_with_a_signal_the_process_survives(node: Any) -> None:
    uuid_ = node.run(command=["sh", "-c", "trap '' HUP; sleep 300"])
    row = _act(node, uuid_, "kill", consts.CONTAINER_KILLING, "container_kill", "SIGHUP")
    assert row.status == consts.RUNNING


def test_failed_start_is_an_error_with_the_engine_reason(node: Any) -> None:
    uuid_, ctx = node.add()
    node.manager.container_create(ctx, uuid_, run=False)
    node.wait()
    # Make the start fail in the engine: the image's command cannot be run any more.
    node.docker.api.remove_container(f"zun-{uuid_}", force=True)
    ctx = node.begin(uuid_, "start", consts.CONTAINER_STARTING)
    node.manager.container_start(ctx, uuid_)
    node.wait()
    row = node.row(uuid_)
    assert row.status == consts.ERROR
    assert row.task_state is None
    assert "No such container" in row.status_reason or "not found" in row.status_reason.lower()
    assert ("compute__do_container_start", "Error") in node.events(uuid_)


def test_failed_stop_leaves_the_status_and_clears_the_task(node: Any) -> None:
    uuid_ = node.run()
    node.docker.api.remove_container(f"zun-{uuid_}", force=True)
    ctx = node.begin(uuid_, "stop", consts.CONTAINER_STOPPING)
    node.manager.container_stop(ctx, uuid_, 0)
    node.wait()
    row = node.row(uuid_)
    assert row.status == consts.RUNNING
    assert row.task_state is None
    assert ("compute__do_container_stop", "Error") in node.events(uuid_)


def test_actions_queue_in_order_on_one_container(node: Any) -> None:
    uuid_, ctx = node.add()
    node.manager.container_create(ctx, uuid_, run=True)
    node.manager.container_stop(node.context(), uuid_, 0)
    node.manager.container_start(node.context(), uuid_)
    node.manager.container_pause(node.context(), uuid_)
    node.wait()
    assert node.row(uuid_).status == consts.PAUSED


def test_show_of_a_container_gone_from_the_engine(node: Any) -> None:
    uuid_ = node.run()
    node.docker.api.remove_container(f"zun-{uuid_}", force=True)
    shown = node.manager.container_show(node.context(), uuid_)
    assert shown["status"] == consts.ERROR
    assert node.row(uuid_).status == consts.ERROR


def test_show_of_a_missing_row_is_not_found(node: Any, fresh_uuid: Any) -> None:
    with pytest.raises(exception.ContainerNotFound):
        node.manager.container_show(node.context(), fresh_uuid())


def test_logs_exec_top_stats(node: Any) -> None:
    uuid_ = node.run(command=["sh", "-c", "echo out; echo err >&2; sleep 300"])
    ctx = node.context()
    # Running can be reported before the shell has written its first line (a busy machine).
    deadline = time.monotonic() + 15
    while True:
        logs = node.manager.container_logs(ctx, uuid_, stdout=True, stderr=False)
        if logs or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert logs == "out\n"
    logs = node.manager.container_logs(ctx, uuid_, stdout=True, stderr=True, tail=1)
    assert logs.count("\n") == 1

    result = node.manager.container_exec(ctx, uuid_, ["sh", "-c", "echo hi; exit 3"])
    assert result == {"output": "hi\n", "exit_code": 3, "exec_id": None, "token": None}
    with pytest.raises(exception.Conflict, match="Timeout on executing command"):
        node.manager.container_exec(ctx, uuid_, ["sleep", "30"])

    top = node.manager.container_top(ctx, uuid_, None)
    assert "PID" in top["Titles"]
    assert any("sleep" in " ".join(p) for p in top["Processes"])

    stats = node.manager.container_stats(ctx, uuid_)
    assert stats["MEM LIMIT(MiB)"] == pytest.approx(32, abs=1)


def test_interactive_exec_is_recorded(node: Any) -> None:
    uuid_ = node.run()
    result = node.manager.container_exec(node.context(), uuid_, ["sh"], run=False, interactive=True)
    assert len(result["exec_id"]) == 64 and result["token"]
    with db_engine.transaction(readonly=True) as session:
        row = session.query(models.ExecInstance).one()
    # Only a digest is stored; the token itself opens the exec's console once.
    assert row.exec_id == result["exec_id"] and result["token"] not in row.token
    assert console_tokens.consume(uuid_, result["token"], row.exec_id).exec_id == row.exec_id
    with pytest.raises(exception.Invalid):
        node.manager.container_exec_resize(node.context(), uuid_, "0" * 64, 40, 100)


def test_attach_token(node: Any) -> None:
    uuid_ = node.run(interactive=True, tty=True)
    reply = node.manager.container_attach(node.context(), uuid_)
    row = node.row(uuid_)
    assert reply["token"] not in row.websocket_token
    assert reply["url"].endswith(f"?token={reply['token']}&uuid={uuid_}")
    assert console_tokens.consume(uuid_, reply["token"]).container_uuid == uuid_
    node.manager.container_resize(node.context(), uuid_, 30, 90)


def test_archives(node: Any) -> None:
    uuid_ = node.run()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("note.txt")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"hello"))
    ctx = node.context()
    node.manager.container_put_archive(
        ctx, uuid_, "/tmp", base64.b64encode(buffer.getvalue()).decode()
    )
    got = node.manager.container_get_archive(ctx, uuid_, "/tmp/note.txt")
    assert got["stat"]["name"] == "note.txt" and got["stat"]["size"] == 5
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(got["data"]))) as tar:
        assert tar.extractfile("note.txt").read() == b"hello"
    with pytest.raises(exception.Base64Exception):
        node.manager.container_put_archive(ctx, uuid_, "/tmp", "not base64!")


def test_update_is_applied_live(node: Any) -> None:
    uuid_ = node.run()
    reply = node.manager.container_update(node.context(), uuid_, cpu=0.5, memory="64")
    assert reply["memory"] == "64"
    host_config = node.engine_container(uuid_).attrs["HostConfig"]
    assert host_config["NanoCpus"] == 500_000_000
    assert host_config["Memory"] == 64 << 20


def test_resize_container_updates_row_and_usage(node: Any) -> None:
    uuid_ = node.run()
    row = _act(node, uuid_, "resize", "container_resizing", "resize_container", 0.25, "48")
    assert (row.cpu, row.memory) == (0.25, "48")
    assert node.engine_container(uuid_).attrs["HostConfig"]["Memory"] == 48 << 20
    assert node.compute_node().mem_used == 48


def test_commit_records_the_image(node: Any) -> None:
    uuid_ = node.run()
    repo = f"zt-commit-{node.project_id}"
    with db_engine.transaction() as session:
        session.add(
            models.Image(uuid=f"{node.project_id}-img", repo=repo, tag="v1", host=node.host)
        )
    try:
        _act(
            node,
            uuid_,
            "commit",
            "container_committing",
            "container_commit",
            repo,
            "v1",
            f"{node.project_id}-img",
        )
        image = node.docker.images.get(f"{repo}:v1")
        with db_engine.transaction(readonly=True) as session:
            row = session.query(models.Image).filter_by(uuid=f"{node.project_id}-img").one()
        assert row.image_id == image.id
        assert int(row.size) > 0
    finally:
        node.docker.images.remove(f"{repo}:v1", force=True)


def test_rebuild_keeps_identity_and_networks(node: Any) -> None:
    uuid_ = node.run()
    before = node.row(uuid_)
    row = _act(
        node,
        uuid_,
        "rebuild",
        consts.CONTAINER_REBUILDING,
        "container_rebuild",
        True,
        None,
        None,
        status=consts.REBUILDING,
    )
    assert row.status == consts.RUNNING
    assert row.container_id != before.container_id
    assert (row.uuid, row.name) == (before.uuid, before.name)
    assert list(row.addresses) == list(before.addresses)
    assert node.engine_container(uuid_).id == row.container_id

    row = _act(
        node,
        uuid_,
        "rebuild",
        consts.CONTAINER_REBUILDING,
        "container_rebuild",
        False,
        None,
        None,
        status=consts.REBUILDING,
    )
    assert row.status == consts.CREATED


def test_rebuild_with_a_missing_image_is_an_error(node: Any) -> None:
    uuid_ = node.run()
    ctx = node.begin(
        uuid_,
        "rebuild",
        consts.CONTAINER_REBUILDING,
        status=consts.REBUILDING,
        image="zun-test/absent:x",
        image_pull_policy="never",
    )
    node.manager.container_rebuild(ctx, uuid_, True, "zun-test/absent:x", None)
    node.wait()
    row = node.row(uuid_)
    assert row.status == consts.ERROR and "zun-test/absent:x" in row.status_reason
    # The old engine container is kept: nothing was replaced.
    assert node.engine_container(uuid_) is not None


def test_network_attach_and_detach(node: Any) -> None:
    uuid_ = node.run()
    name = f"zt-extra-{node.project_id}"
    net = node.docker.networks.create(name, labels={"zun.managed": "true"})
    try:
        ctx = node.begin(uuid_, "network_attach", consts.NETWORK_ATTACHING)
        node.manager.network_attach(ctx, uuid_, name, None)
        node.wait()
        row = node.row(uuid_)
        assert set(row.addresses) == {name, f"zun-{node.project_id}"}
        assert ("compute__do_container_network_attach", "Success") in node.events(uuid_)
        entries = node.manager.network_list(node.context(), uuid_)
        assert {e["net_id"] for e in entries} == set(row.addresses)
        assert all(e["fixed_ips"] for e in entries)

        ctx = node.begin(uuid_, "network_detach", consts.NETWORK_DETACHING)
        node.manager.network_detach(ctx, uuid_, name)
        node.wait()
        assert set(node.row(uuid_).addresses) == {f"zun-{node.project_id}"}

        ctx = node.begin(uuid_, "network_attach", consts.NETWORK_ATTACHING)
        node.manager.network_attach(ctx, uuid_, "zt-no-such-net", None)
        node.wait()
        assert node.row(uuid_).task_state is None
        assert ("compute__do_container_network_attach", "Error") in node.events(uuid_)
    finally:
        node.manager.container_delete(node.context(), uuid_, force=True)
        node.wait()
        net.remove()


def test_security_groups_are_refused(node: Any) -> None:
    with pytest.raises(exception.SecurityGroupCannotBeApplied):
        node.manager.add_security_group(node.context(), "x", "default")


def test_node_refuses_a_member_joining_another_projects_network(node: Any) -> None:
    """The API checks this first; the node checks again, so a message that did not come from
    the API cannot put a container on another tenant's bridge."""
    uuid_ = node.run()
    other = node.docker.networks.create(
        f"zun-other-{node.project_id}", labels={"zun.managed": "true"}
    )
    try:
        ctx = node.begin(uuid_, "network_attach", consts.NETWORK_ATTACHING)
        ctx.is_admin = False
        ctx.roles = ["member"]
        node.manager.network_attach(ctx, uuid_, other.name, None)
        node.wait()
        row = node.row(uuid_)
        assert row.task_state is None
        assert set(row.addresses) == {f"zun-{node.project_id}"}
        assert ("compute__do_container_network_attach", "Error") in node.events(uuid_)
        other.reload()
        assert not other.attrs.get("Containers")
    finally:
        node.manager.container_delete(node.context(), uuid_, force=True)
        node.wait()
        other.remove()


def test_node_refuses_to_create_a_members_container_on_the_host_network(node: Any) -> None:
    uuid_, ctx = node.add()
    ctx.is_admin = False
    ctx.roles = ["member"]
    node.manager.container_create(ctx, uuid_, run=True, requested_networks=[{"network": "host"}])
    node.wait()
    row = node.row(uuid_)
    assert row.status == consts.ERROR and "host could not be found" in row.status_reason
    assert node.engine_container(uuid_) is None


def test_show_keeps_the_reason_of_a_container_that_failed(node: Any) -> None:
    """A show racing the end of a failed create must not replace the engine's refusal with
    "missing in the engine" (seen as a flaky e2e failure before the fix)."""
    reason = "Docker internal error: Minimum memory limit allowed is 6MB."
    uuid_, _ = node.add(
        action=None, claim=False, status=consts.ERROR, task_state=None, status_reason=reason
    )
    shown = node.manager.container_show(node.context(), uuid_)
    assert shown["status"] == consts.ERROR and shown["status_reason"] == reason
    assert node.row(uuid_).status_reason == reason


def test_show_reports_a_running_container_that_vanished(node: Any) -> None:
    uuid_ = node.run()
    node.engine_container(uuid_).remove(force=True)
    shown = node.manager.container_show(node.context(), uuid_)
    assert shown["status"] == consts.ERROR
    assert "missing" in shown["status_reason"]
    node.manager.container_delete(node.context(), uuid_, force=True)
    node.wait()


def test_a_read_of_a_vanished_auto_heal_container_heals_it(node: Any) -> None:
    """Issue 12 item 6: a GET must not write Error "missing in the engine" over an auto_heal
    container (auto_heal never rebuilds an Error row): the read starts the rebuild."""
    uuid_ = node.run(auto_heal=True)
    old_id = node.engine_container(uuid_).id
    node.engine_container(uuid_).remove(force=True)
    shown = node.manager.container_show(node.context(), uuid_)
    assert shown["status"] == consts.REBUILDING
    node.wait()
    row = node.row(uuid_)
    assert (row.status, row.task_state, row.status_reason) == (consts.RUNNING, None, None)
    assert node.engine_container(uuid_).id != old_id
    assert node.engine_container(uuid_).status == "running"


def test_an_auto_heal_row_a_read_had_put_in_error_is_healed(node: Any) -> None:
    """Rows an earlier release wrote Error "missing in the engine" on a read are healed by
    the next sync (and only those: another Error keeps its reason)."""
    from zun.compute import periodic_tasks
    from zun.runtime.docker.driver import REASON_NOT_IN_ENGINE

    uuid_ = node.run(auto_heal=True)
    failed = node.run(auto_heal=True)
    for ident in (uuid_, failed):
        node.engine_container(ident).remove(force=True)
    with db_engine.transaction() as session:
        session.execute(
            sa.update(models.Container)
            .where(models.Container.uuid == uuid_)
            .values(status=consts.ERROR, status_reason=REASON_NOT_IN_ENGINE)
        )
        session.execute(
            sa.update(models.Container)
            .where(models.Container.uuid == failed)
            .values(status=consts.ERROR, status_reason="image gone")
        )
    periodic_tasks.sync_container_state(node.manager, node.context())
    node.wait()
    assert node.row(uuid_).status == consts.RUNNING
    assert node.engine_container(uuid_).status == "running"
    assert (node.row(failed).status, node.row(failed).status_reason) == (consts.ERROR, "image gone")
