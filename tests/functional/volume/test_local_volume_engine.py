"""Embedded local volumes on the real Docker engine, with real busybox containers."""

from __future__ import annotations

import base64
import json
import os
import stat

import docker
import pytest

from zun.common import exception
from zun.volume import local

pytestmark = pytest.mark.docker

VOLUME_COLUMNS = {
    "uuid",
    "project_id",
    "user_id",
    "cinder_volume_id",
    "volume_provider",
    "connection_info",
    "host",
    "auto_remove",
    "contents",
}
MAPPING_COLUMNS = {"uuid", "project_id", "user_id", "container_uuid", "container_path"}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _zun_volumes(client, container_uuid: str) -> list[str]:
    return sorted(
        v.name
        for v in client.volumes.list(filters={"label": f"zun.container.uuid={container_uuid}"})
    )


def _volume_exists(client, name: str) -> bool:
    try:
        client.volumes.get(name)
    except docker.errors.NotFound:
        return False
    return True


def test_sized_volume_created_labelled_and_removed(docker_client, new_uuid, tmp_path, run_busybox):
    cuuid = new_uuid()
    mounts, records = local.prepare_mounts(
        docker_client,
        cuuid,
        [{"size": "1", "destination": "/data"}],
        tmp_path,
        project_id="p1",
        user_id="u1",
        host="node1",
    )
    name = f"zun-{cuuid}-0"
    vol = docker_client.volumes.get(name)
    assert vol.attrs["Driver"] == "local"
    assert vol.attrs["Labels"] == {
        "zun.managed": "true",
        "zun.container.uuid": cuuid,
        "zun.size_gb": "1",
        "zun.project_id": "p1",
    }
    [record] = records
    assert set(record["volume"]) == VOLUME_COLUMNS
    assert set(record["volume_mapping"]) == MAPPING_COLUMNS
    assert record["volume"]["auto_remove"] is True
    assert record["volume"]["volume_provider"] == "local"
    assert record["volume"]["project_id"] == "p1" and record["volume"]["host"] == "node1"
    assert json.loads(record["volume"]["connection_info"])["name"] == name
    assert record["volume_mapping"] == {
        **record["volume_mapping"],
        "container_uuid": cuuid,
        "container_path": "/data",
        "user_id": "u1",
    }

    code, out, container = run_busybox("echo kept > /data/f && cat /data/f", mounts=mounts)
    assert (code, out.strip()) == (0, "kept")

    # Still used by a container: refused, and said so.
    with pytest.raises(exception.VolumeDeleteFailed):
        local.release_mounts(docker_client, records, tmp_path)
    assert _volume_exists(docker_client, name)

    container.remove(force=True)
    local.release_mounts(docker_client, records, tmp_path)
    assert not _volume_exists(docker_client, name)
    local.release_mounts(docker_client, records, tmp_path)  # idempotent
    local.release_mounts(docker_client, [r["volume"] for r in records], tmp_path)


def test_existing_named_volume_attached_and_kept(
    docker_client, new_uuid, user_volumes, tmp_path, run_busybox
):
    name = f"ztest-user-{new_uuid()}"
    user_volumes.append(name)
    docker_client.volumes.create(name=name, labels={local.LABEL_PROJECT: "project-a"})
    code, _, first = run_busybox(
        "echo from-user > /v/hello", mounts=[docker.types.Mount("/v", name)]
    )
    assert code == 0
    first.remove()

    cuuid = new_uuid()
    mounts, records = local.prepare_mounts(
        docker_client,
        cuuid,
        [{"type": "volume", "source": name, "destination": "/srv"}],
        tmp_path,
        project_id="project-a",
    )
    assert records[0]["volume"]["auto_remove"] is False
    code, out, container = run_busybox("cat /srv/hello", mounts=mounts)
    assert (code, out.strip()) == (0, "from-user")
    container.remove()
    local.release_mounts(docker_client, records, tmp_path)
    assert _volume_exists(docker_client, name)
    assert _zun_volumes(docker_client, cuuid) == []


def test_bind_injects_file_content_read_only(docker_client, new_uuid, tmp_path, run_busybox):
    cuuid = new_uuid()
    content = "line one\nsecret=42\n"
    mounts, records = local.prepare_mounts(
        docker_client,
        cuuid,
        [
            {"type": "bind", "source": _b64(content), "destination": "/etc/app/app.conf"},
        ],
        tmp_path,
    )
    [record] = records
    info = json.loads(record["volume"]["connection_info"])
    host_file = tmp_path / info["path"]
    assert host_file.read_text() == content
    assert host_file.parent == tmp_path / "volumes" / cuuid
    assert stat.S_IMODE(host_file.parent.stat().st_mode) == 0o700
    assert record["volume"]["contents"] == _b64(content)
    assert record["volume"]["auto_remove"] is True

    code, out, _ = run_busybox("cat /etc/app/app.conf", mounts=mounts)
    assert (code, out) == (0, content)
    code, out, _ = run_busybox("echo x > /etc/app/app.conf", mounts=mounts)
    assert code != 0 and "Read-only" in out
    assert host_file.read_text() == content

    local.release_mounts(docker_client, records, tmp_path)
    assert not host_file.exists() and not host_file.parent.exists()
    local.release_mounts(docker_client, records, tmp_path)


def test_bind_without_source_is_an_empty_file(docker_client, new_uuid, tmp_path, run_busybox):
    mounts, records = local.prepare_mounts(
        docker_client, new_uuid(), [{"type": "bind", "size": 1, "destination": "/e"}], tmp_path
    )
    code, out, _ = run_busybox("wc -c < /e", mounts=mounts)
    assert (code, out.strip()) == (0, "0")
    local.release_mounts(docker_client, records, tmp_path)


def test_failure_half_way_leaves_nothing_behind(docker_client, new_uuid, tmp_path):
    cuuid = new_uuid()
    mounts = [
        {"size": 1, "destination": "/a"},
        {"type": "bind", "source": _b64("x"), "destination": "/b"},
        {"size": 2, "destination": "/c"},
        {"source": f"ztest-missing-{cuuid}", "destination": "/d"},
    ]
    with pytest.raises(exception.VolumeNotFound):
        local.prepare_mounts(docker_client, cuuid, mounts, tmp_path)
    assert _zun_volumes(docker_client, cuuid) == []
    assert not (tmp_path / "volumes" / cuuid).exists()


def test_bad_base64_after_a_volume_leaves_nothing(docker_client, new_uuid, tmp_path):
    cuuid = new_uuid()
    with pytest.raises(exception.Base64Exception):
        local.prepare_mounts(
            docker_client,
            cuuid,
            [
                {"size": 1, "destination": "/a"},
                {"type": "bind", "source": "not base64!", "destination": "/b"},
            ],
            tmp_path,
        )
    assert _zun_volumes(docker_client, cuuid) == []


def test_unwritable_state_dir_after_a_volume_leaves_nothing(docker_client, new_uuid, tmp_path):
    cuuid = new_uuid()
    state_file = tmp_path / "not-a-dir"
    state_file.write_text("")
    with pytest.raises(OSError):
        local.prepare_mounts(
            docker_client,
            cuuid,
            [
                {"size": 1, "destination": "/a"},
                {"type": "bind", "source": _b64("x"), "destination": "/b"},
            ],
            state_file,
        )
    assert _zun_volumes(docker_client, cuuid) == []


@pytest.mark.parametrize(
    "mounts",
    [
        [{"size": 1, "destination": "relative/path"}],
        [{"size": 1, "destination": "/"}],
        [{"size": 1, "destination": "/x"}, {"size": 1, "destination": "/x/"}],
        [{"type": "tmpfs", "size": 1, "destination": "/x"}],
        [{"size": "abc", "destination": "/x"}],
        [{"size": 0, "destination": "/x"}],
        [{"size": True, "destination": "/x"}],
        [{"destination": "/x"}],
    ],
)
def test_invalid_mounts_rejected_before_anything_is_created(
    docker_client, new_uuid, tmp_path, mounts
):
    cuuid = new_uuid()
    with pytest.raises(exception.Invalid):
        local.prepare_mounts(
            docker_client, cuuid, [{"size": 1, "destination": "/ok"}, *mounts], tmp_path
        )
    assert _zun_volumes(docker_client, cuuid) == []
    assert not (tmp_path / "volumes").exists()


def test_unsafe_container_uuid_rejected(docker_client, tmp_path):
    with pytest.raises(exception.InvalidUUID):
        local.prepare_mounts(docker_client, "../../etc", [], tmp_path)


def test_volume_of_another_container_is_not_usable(docker_client, new_uuid, tmp_path):
    owner, other = new_uuid(), new_uuid()
    _, records = local.prepare_mounts(
        docker_client, owner, [{"size": 1, "destination": "/a"}], tmp_path, project_id="project-a"
    )
    with pytest.raises(exception.VolumeNotUsable):
        local.prepare_mounts(
            docker_client,
            other,
            [{"source": f"zun-{owner}-0", "destination": "/a"}],
            tmp_path,
            project_id="project-a",
        )
    assert _volume_exists(docker_client, f"zun-{owner}-0")
    local.release_mounts(docker_client, records, tmp_path)


def test_release_never_removes_unmanaged_or_outside_paths(
    docker_client, user_volumes, new_uuid, tmp_path
):
    name = f"ztest-plain-{new_uuid()}"
    user_volumes.append(name)
    docker_client.volumes.create(name=name)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    forged = [
        {"auto_remove": True, "connection_info": json.dumps({"type": "volume", "name": name})},
        {
            "auto_remove": True,
            "connection_info": json.dumps({"type": "bind", "path": "../outside.txt"}),
        },
        {
            "auto_remove": True,
            "connection_info": json.dumps({"type": "bind", "path": str(outside)}),
        },
    ]
    local.release_mounts(docker_client, forged, tmp_path / "state")
    assert _volume_exists(docker_client, name)
    assert outside.read_text() == "keep"


def test_docker_mounts_for_rebuilds_mounts_and_lost_files(
    docker_client, new_uuid, tmp_path, run_busybox
):
    cuuid = new_uuid()
    _, records = local.prepare_mounts(
        docker_client,
        cuuid,
        [
            {"size": 1, "destination": "/data"},
            {"type": "bind", "source": _b64("again"), "destination": "/etc/f"},
        ],
        tmp_path,
    )
    host_file = tmp_path / json.loads(records[1]["volume"]["connection_info"])["path"]
    os.unlink(host_file)  # e.g. the state dir was wiped by a node re-install
    mounts = local.docker_mounts_for(docker_client, records, tmp_path)
    assert host_file.read_text() == "again"
    code, out, container = run_busybox("cat /etc/f; echo; ls -d /data", mounts=mounts)
    assert (code, out.split()) == (0, ["again", "/data"])
    container.remove()
    local.release_mounts(docker_client, records, tmp_path)
    with pytest.raises(exception.VolumeNotFound):
        local.docker_mounts_for(docker_client, records[:1], tmp_path)


def test_release_container_volumes_sweeps_by_label(docker_client, new_uuid, tmp_path):
    cuuid = new_uuid()
    local.prepare_mounts(
        docker_client,
        cuuid,
        [
            {"size": 1, "destination": "/a"},
            {"size": 1, "destination": "/b"},
            {"type": "bind", "source": _b64("x"), "destination": "/c"},
        ],
        tmp_path,
    )
    assert _zun_volumes(docker_client, cuuid) == [f"zun-{cuuid}-0", f"zun-{cuuid}-1"]
    local.release_container_volumes(docker_client, cuuid, tmp_path)
    assert _zun_volumes(docker_client, cuuid) == []
    assert not (tmp_path / "volumes" / cuuid).exists()
    local.release_container_volumes(docker_client, cuuid, tmp_path)


@pytest.mark.parametrize("labels", [None, {"zun.project_id": "project-b"}])
def test_a_project_cannot_mount_a_volume_that_is_not_its_own(
    docker_client, new_uuid, user_volumes, tmp_path, labels
):
    name = f"ztest-user-{new_uuid()}"
    user_volumes.append(name)
    docker_client.volumes.create(name=name, labels=labels)
    cuuid = new_uuid()
    with pytest.raises(exception.VolumeNotFound):
        local.prepare_mounts(
            docker_client,
            cuuid,
            [{"type": "volume", "source": name, "destination": "/srv"}],
            tmp_path,
            project_id="project-a",
        )
    assert _zun_volumes(docker_client, cuuid) == []


def test_volumes_zun_makes_are_labelled_with_their_project(docker_client, new_uuid, tmp_path):
    cuuid = new_uuid()
    _, records = local.prepare_mounts(
        docker_client,
        cuuid,
        [{"type": "volume", "size": 1, "destination": "/data"}],
        tmp_path,
        project_id="project-a",
    )
    try:
        vols = _zun_volumes(docker_client, cuuid)
        assert len(vols) == 1
        assert docker_client.volumes.get(vols[0]).attrs["Labels"][local.LABEL_PROJECT] == (
            "project-a"
        )
    finally:
        local.release_mounts(docker_client, records, tmp_path)


@pytest.mark.parametrize(
    "labels",
    [
        None,  # the host's or an operator's volume
        {"zun.project_id": "project-b"},  # another project's
        {"zun.project_id": ""},  # made for no project
    ],
)
@pytest.mark.parametrize("path", ["container", "capsule"])
def test_one_ownership_check_for_containers_and_capsules(
    docker_client, new_uuid, user_volumes, tmp_path, labels, path
):
    """An operator's bind volume of a host directory, unlabelled: a member once read a host
    file through a capsule's volumeID. Both paths now refuse it, and another project's."""
    host_dir = tmp_path / "host-secrets"
    host_dir.mkdir()
    (host_dir / "shadow").write_text("secret")
    name = f"ztest-bind-{new_uuid()}"
    user_volumes.append(name)
    docker_client.volumes.create(
        name=name,
        driver="local",
        labels=labels,
        driver_opts={"type": "none", "o": "bind", "device": str(host_dir)},
    )
    owner = new_uuid()
    with pytest.raises(exception.VolumeNotFound):
        if path == "container":
            local.prepare_mounts(
                docker_client,
                owner,
                [{"type": "volume", "source": name, "destination": "/v"}],
                tmp_path,
                project_id="project-a",
            )
        else:
            from types import SimpleNamespace

            capsule = SimpleNamespace(uuid=owner, project_id="project-a", user_id="u")
            local.prepare_capsule_mounts(
                docker_client,
                capsule,
                [
                    {
                        "volume_id": name,
                        "mounts": [{"container_uuid": new_uuid(), "mount_path": "/v"}],
                    }
                ],
                "node1",
            )


@pytest.mark.parametrize("path", ["container", "capsule"])
def test_both_paths_mount_a_volume_handed_to_the_project(
    docker_client, new_uuid, user_volumes, tmp_path, path
):
    name = f"ztest-handed-{new_uuid()}"
    user_volumes.append(name)
    docker_client.volumes.create(name=name, labels={"zun.project_id": "project-a"})
    owner = new_uuid()
    if path == "container":
        mounts, records = local.prepare_mounts(
            docker_client,
            owner,
            [{"type": "volume", "source": name, "destination": "/v"}],
            tmp_path,
            project_id="project-a",
        )
        assert [m["Source"] for m in mounts] == [name]
        local.release_mounts(docker_client, records, tmp_path)
    else:
        from types import SimpleNamespace

        capsule = SimpleNamespace(uuid=owner, project_id="project-a", user_id="u")
        member = new_uuid()
        by_member, _ = local.prepare_capsule_mounts(
            docker_client,
            capsule,
            [{"volume_id": name, "mounts": [{"container_uuid": member, "mount_path": "/v"}]}],
            "node1",
        )
        assert [m["Source"] for m in by_member[member]] == [name]
    assert _volume_exists(docker_client, name)
