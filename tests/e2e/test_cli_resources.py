"""The real clients against a real zun-all, for every resource but containers.

``openstack --os-auth-type none --os-endpoint <url>/v1 appcontainer ...`` (python-openstackclient
with python-zunclient's plugin) drives quotas, quota classes, registries, images (pull, list,
show, search, delete), hosts, services (disable, enable, force-down, delete) and availability
zones, and parses their ``-f json`` output. OSC without auth sends no identity headers: the
noauth server takes it as an admin of project ``default``.

What the CLIs cannot do is done another way, and said so:

* the ``zun`` shell insists on Keystone (``--os-username``, ``--os-password``, ``--os-auth-url``,
  then a token request), so it cannot reach a noauth server at all; member identities go
  through the python-zunclient library with the X-* identity headers set on its session;
* neither client has a command for ``POST /v1/networks`` or ``DELETE /v1/networks/{id}``: those
  are plain HTTP requests.

This module runs its own zun-all (services are disabled and forced down here, which the other
end-to-end modules must not see), with ``[docker]/default_registry`` set to the local registry:
a search must name its registry, and the clients put the image name in the URL path, where the
``/`` of ``127.0.0.1:5000/busybox`` does not fit (see test_search_with_a_registry_in_the_name).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e.support import ZunAll, http, sweep

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

OPENSTACK = Path(sys.executable).parent / "openstack"
RUN = uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, registry: dict[str, str]
) -> Iterator[ZunAll]:
    zun_all = ZunAll(tmp_path_factory.mktemp("zun-all-cli"))
    with zun_all.config.open("a") as conf:
        conf.write(f"[docker]\ndefault_registry = {registry['url']}\n")
    zun_all.start()
    try:
        yield zun_all
    finally:
        zun_all.stop()
        sweep(docker_client, zun_all.host)


class CliError(AssertionError):
    pass


def osc(server: ZunAll, *args: str, json_output: bool = True, check: bool = True) -> Any:
    """``openstack appcontainer <args>`` at 1.40; the parsed ``-f json`` output, or the text."""
    if json_output:
        # create and run take everything after the image as its command: format flags first.
        at = 1 if args[0] in ("create", "run") else len(args)
        args = (*args[:at], "-f", "json", *args[at:])
    cmd = [
        str(OPENSTACK),
        "--os-auth-type",
        "none",
        "--os-endpoint",
        server.url + "/v1",
        "--os-container-api-version",
        "1.40",
        "appcontainer",
        *args,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if check and done.returncode != 0:
        raise CliError(f"{' '.join(args)} exited {done.returncode}: {done.stderr}")
    if not check:
        return done
    return json.loads(done.stdout) if json_output else done.stdout


def member(server: ZunAll, project: str, user: str | None = None) -> Any:
    """A python-zunclient library client that sends a member's identity headers."""
    zun = server.client()
    zun.http_client.session.session.headers.update(
        {"X-User-Id": user or f"user-of-{project}", "X-Project-Id": project, "X-Roles": "member"}
    )
    return zun


# --- quotas and quota classes --------------------------------------------------------------------


def test_quota_update_get_default_delete(server: ZunAll) -> None:
    project = f"cli-{RUN}"
    assert osc(server, "quota", "update", "--containers", "5", "--cpu", "3", project) == {
        "containers": 5,
        "memory": 51200,
        "cpu": 3,
        "disk": 100,
    }
    assert osc(server, "quota", "get", project)["containers"] == 5
    usages = osc(server, "quota", "get", "--usages", project)
    assert usages["containers"] == {"limit": 5, "in_use": 0}
    assert usages["cpu"] == {"limit": 3, "in_use": 0.0}
    assert osc(server, "quota", "default", project) == {
        "containers": 40,
        "memory": 51200,
        "cpu": 20,
        "disk": 100,
    }
    assert "accepted" in osc(server, "quota", "delete", project, json_output=False)
    assert osc(server, "quota", "get", project)["containers"] == 40


def test_quota_unlimited_default_and_above_one_containers_size(server: ZunAll) -> None:
    """A quota is a project's total: -1 (unlimited), the default memory quota itself and values
    above one container's bounds (cpu 16, disk 160) are accepted, as by the original."""
    project = f"cli-big-{RUN}"
    assert osc(
        server, "quota", "update", "--memory", "51200", "--cpu", "-1", "--disk", "5000", project
    ) == {"containers": 40, "memory": 51200, "cpu": -1, "disk": 5000}
    assert osc(server, "quota", "get", project)["cpu"] == -1


def test_quota_usage_counts_the_projects_containers(
    server: ZunAll, registry: dict[str, str]
) -> None:
    created = osc(server, "create", "--cpu", "0.5", "--memory", "64", registry["image"])
    try:
        usages = osc(server, "quota", "get", "--usages", "default")
        assert usages["containers"]["in_use"] >= 1
        assert usages["memory"]["in_use"] >= 64
    finally:
        osc(server, "delete", "--force", created["uuid"], json_output=False)


def test_a_member_reads_only_its_own_quotas(server: ZunAll) -> None:
    from zunclient import exceptions

    zun = member(server, f"cli-a-{RUN}")
    assert zun.quotas.get(f"cli-a-{RUN}").containers == 40
    with pytest.raises(exceptions.Forbidden):
        zun.quotas.get(f"cli-b-{RUN}")
    with pytest.raises(exceptions.Forbidden):
        zun.quotas.update(f"cli-a-{RUN}", containers=1000)


def test_quota_class_update_and_get(server: ZunAll) -> None:
    name = f"gold-{RUN}"
    assert osc(server, "quota", "class", "update", "--memory", "1024", name) == {
        "containers": 40,
        "memory": 1024,
        "cpu": 20,
        "disk": 100,
    }
    assert osc(server, "quota", "class", "get", name)["memory"] == 1024
    assert osc(server, "quota", "class", "get", f"unknown-{RUN}")["memory"] == 51200


# --- registries ----------------------------------------------------------------------------------


def test_registry_lifecycle(server: ZunAll, registry: dict[str, str]) -> None:
    name = f"reg-{RUN}"
    created = osc(
        server,
        "registry",
        "create",
        "--name",
        name,
        "--domain",
        registry["url"],
        "--username",
        "u",
        "--password",
        "s3cret",
    )
    assert created["password"] == "***" and created["project_id"] == "default"
    listed = {r["uuid"]: r for r in osc(server, "registry", "list")}
    assert listed[created["uuid"]]["password"] == "***"
    updated = osc(server, "registry", "update", name, "--username", "u2")
    assert updated["username"] == "u2" and updated["password"] == "***"
    assert osc(server, "registry", "show", created["uuid"])["username"] == "u2"
    assert "accepted" in osc(server, "registry", "delete", name, json_output=False)
    gone = osc(server, "registry", "show", name, check=False)
    assert gone.returncode == 1 and "(HTTP 404)" in gone.stderr


def test_registries_of_another_project_are_invisible(
    server: ZunAll, registry: dict[str, str]
) -> None:
    from zunclient import exceptions

    owner = member(server, f"cli-owner-{RUN}")
    # create, get and update answer {"registry": {...}}, which the library keeps as is.
    mine = owner.registries.create(name=f"own-{RUN}", domain=registry["url"]).registry
    other = member(server, f"cli-other-{RUN}")
    assert all(r.uuid != mine["uuid"] for r in other.registries.list())
    with pytest.raises(exceptions.NotFound):
        other.registries.get(mine["uuid"])
    with pytest.raises(exceptions.NotFound):
        other.registries.delete(mine["uuid"])
    # The admin (OSC without auth) lists every project with --all-projects.
    everyone = osc(server, "registry", "list", "--all-projects")
    assert mine["uuid"] in {r["uuid"] for r in everyone}
    owner.registries.delete(mine["uuid"])


# --- images --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pushed_tag(docker_client: Any, registry: dict[str, str], busybox_image: str) -> str:
    """A tag of busybox of its own in the local registry, so deleting it harms nobody."""
    repo = f"{registry['url']}/busybox"
    tag = f"cli-{RUN}"
    image = docker_client.images.get(busybox_image)
    image.tag(repo, tag)
    try:
        for event in docker_client.api.push(repo, tag=tag, stream=True, decode=True):
            assert "error" not in event, event
    finally:
        docker_client.images.remove(f"{repo}:{tag}")
    return f"{repo}:{tag}"


def _wait_pulled(server: ZunAll, image_uuid: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    shown: dict[str, Any] = {}
    while time.monotonic() < deadline:
        shown = osc(server, "image", "show", image_uuid)
        if shown.get("image_id"):
            return shown
        time.sleep(0.5)
    raise AssertionError(f"image {image_uuid} was not pulled: {shown}")


def test_image_pull_list_show_delete(server: ZunAll, pushed_tag: str, docker_client: Any) -> None:
    pulled = osc(server, "image", "pull", pushed_tag, server.host)
    repo, tag = pushed_tag.rsplit(":", 1)
    assert (pulled["repo"], pulled["tag"], pulled["host"]) == (repo, tag, server.host)
    shown = _wait_pulled(server, pulled["uuid"])
    assert shown["image_id"].startswith("sha256:") and int(shown["size"]) > 0
    assert docker_client.images.get(pushed_tag).id == shown["image_id"]
    assert pulled["uuid"] in {i["uuid"] for i in osc(server, "image", "list")}
    again = osc(server, "image", "pull", pushed_tag, server.host, check=False)
    assert again.returncode == 1 and "(HTTP 409)" in again.stderr
    osc(server, "image", "delete", pulled["uuid"], json_output=False)
    deadline = time.monotonic() + 60
    while pulled["uuid"] in {i["uuid"] for i in osc(server, "image", "list")}:
        assert time.monotonic() < deadline, "the image row stayed"
        time.sleep(0.5)
    assert not docker_client.images.list(name=pushed_tag)


def test_image_pull_to_an_unknown_host(server: ZunAll, pushed_tag: str) -> None:
    done = osc(server, "image", "pull", pushed_tag, f"nowhere-{RUN}", check=False)
    assert done.returncode == 1 and "(HTTP 400)" in done.stderr
    assert f"The host nowhere-{RUN} does not exist." in done.stderr


def test_image_show_and_delete_of_unknown_images(server: ZunAll) -> None:
    for args in (("image", "show", str(uuid.uuid4())), ("image", "delete", str(uuid.uuid4()))):
        done = osc(server, *args, check=False, json_output=args[1] == "show")
        # An unknown image is a 400 image-not-found (ImageNotFound is an Invalid in Zun).
        assert "could not be found. (HTTP 400)" in done.stdout + done.stderr, done


def test_image_search_in_the_default_registry(server: ZunAll, registry: dict[str, str]) -> None:
    # OSC shows search results in Glance's columns: the name is in "Name".
    found = osc(server, "image", "search", "busybox")
    assert f"{registry['url']}/busybox" in {r["Name"] for r in found}, found
    exact = osc(server, "image", "search", "--exact-match", "busybox")
    assert [r["Name"] for r in exact] == [f"{registry['url']}/busybox"], exact


def test_search_with_a_registry_in_the_name(server: ZunAll, registry: dict[str, str]) -> None:
    """The clients send ``GET /v1/images/<name>/search`` with the name unquoted: a name with
    its registry (``127.0.0.1:5000/busybox``) spans several path segments, which the search
    route accepts (Zun's router answered 404)."""
    found = osc(server, "image", "search", f"{registry['url']}/busybox")
    assert f"{registry['url']}/busybox" in [r["Name"] for r in found], found


def test_images_are_for_admins(server: ZunAll) -> None:
    from zunclient import exceptions

    zun = member(server, f"cli-a-{RUN}")
    with pytest.raises(exceptions.Forbidden):
        zun.images.list()


# --- hosts, availability zones, services ---------------------------------------------------------


def test_hosts(server: ZunAll) -> None:
    hosts = {h["hostname"]: h for h in osc(server, "host", "list")}
    assert server.host in hosts
    shown = osc(server, "host", "show", server.host)
    assert shown["uuid"] == hosts[server.host]["uuid"]
    assert shown["cpus"] >= 1 and shown["mem_total"] > 0
    assert osc(server, "host", "show", shown["uuid"])["hostname"] == server.host
    done = osc(server, "host", "show", f"nowhere-{RUN}", check=False)
    assert done.returncode == 1 and "(HTTP 404)" in done.stderr


def test_a_version_error_shows_its_reason(server: ZunAll) -> None:
    """OSC prints only an error's title: a 406 must say why there, and which versions serve."""
    done = subprocess.run(
        [
            str(OPENSTACK),
            "--os-auth-type",
            "none",
            "--os-endpoint",
            server.url + "/v1",
            "--os-container-api-version",
            "1.3",
            "appcontainer",
            "host",
            "list",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "Version 1.3 was requested but the requested API is not supported" in done.stderr
    assert "served from version 1.4 to" in done.stderr and "(HTTP 406)" in done.stderr


def test_availability_zones(server: ZunAll) -> None:
    assert osc(server, "availability", "zone", "list") == [{"availability_zone": "nova"}]


def test_service_disable_enable_force_down(server: ZunAll, registry: dict[str, str]) -> None:
    host = server.host
    disabled = osc(server, "service", "disable", host, "zun-compute", "--reason", "maintenance")
    assert disabled == {
        "Host": host,
        "Binary": "zun-compute",
        "Disabled": True,
        "Disabled Reason": "maintenance",
    }
    try:
        listed = [s for s in osc(server, "service", "list") if s["Host"] == host]
        assert listed[0]["Disabled"] is True and listed[0]["State"] == "up"
        # A disabled node is not chosen: the create is still a 202, in Error.
        created = osc(server, "create", registry["image"])
        assert created["status"] == "Error"
        assert created["status_reason"] == "There are not enough hosts available."
        osc(server, "delete", created["uuid"], json_output=False)
    finally:
        enabled = osc(server, "service", "enable", host, "zun-compute")
    assert enabled == {
        "Host": host,
        "Binary": "zun-compute",
        "Disabled": False,
        "Disabled Reason": None,
    }
    forced = osc(server, "service", "forcedown", host, "zun-compute")
    assert forced == {"Host": host, "Binary": "zun-compute", "Forced_down": True}
    try:
        state = {s["Host"]: s["State"] for s in osc(server, "service", "list")}
        assert state[host] == "down"
    finally:
        unset = osc(server, "service", "forcedown", "--unset", host, "zun-compute")
    assert unset["Forced_down"] is False
    assert {s["Host"]: s["State"] for s in osc(server, "service", "list")}[host] == "up"


def test_service_delete(server: ZunAll) -> None:
    """A decommissioned node's row is deleted; an unknown one is reported (OSC prints the
    404 and still exits 0)."""
    import sqlalchemy as sa

    gone = f"gone-{RUN}"
    engine = sa.create_engine(f"sqlite:///{server.state_dir / 'zun.sqlite'}")
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO zun_service (host, `binary`, disabled, forced_down, report_count, "
                    "created_at) VALUES (:h, 'zun-compute', 0, 0, 1, CURRENT_TIMESTAMP)"
                ),
                {"h": gone},
            )
    finally:
        engine.dispose()
    assert gone in {s["Host"] for s in osc(server, "service", "list")}
    osc(server, "service", "delete", gone, "zun-compute", json_output=False)
    assert gone not in {s["Host"] for s in osc(server, "service", "list")}
    done = osc(server, "service", "delete", gone, "zun-compute", json_output=False, check=False)
    assert "could not be found. (HTTP 404)" in done.stdout + done.stderr


def test_services_are_for_admins(server: ZunAll) -> None:
    from zunclient import exceptions

    zun = member(server, f"cli-a-{RUN}")
    with pytest.raises(exceptions.Forbidden):
        zun.services.list()
    with pytest.raises(exceptions.Forbidden):
        zun.hosts.list()


# --- networks (no CLI command: plain HTTP) ------------------------------------------------------


def test_network_create_and_delete(server: ZunAll, docker_client: Any) -> None:
    net_id = f"cli-net-{RUN}"
    status, body = http(server, "POST", "/v1/networks", {"name": "cli", "neutron_net_id": net_id})
    try:
        assert status == 200, body
        assert body["neutron_net_id"] == net_id and body["network_id"]
        assert docker_client.networks.get(body["network_id"]).name == net_id
        status, again = http(
            server, "POST", "/v1/networks", {"name": "cli", "neutron_net_id": net_id}
        )
        assert status == 409, again
        member_headers = {"X-User-Id": "u", "X-Project-Id": f"cli-a-{RUN}", "X-Roles": "member"}
        assert http(server, "DELETE", f"/v1/networks/{net_id}", headers=member_headers)[0] == 403
    finally:
        status, _ = http(server, "DELETE", f"/v1/networks/{net_id}")
    assert status == 204
    assert not docker_client.networks.list(names=[net_id])
    assert http(server, "DELETE", f"/v1/networks/{net_id}")[0] == 404
