"""/v1/quotas and /v1/quota_classes through the real WSGI pipeline and a migrated database."""

from __future__ import annotations

import uuid

import pytest
from unit.api.apptesting import ApiClient, Seed

from zun.conf import CONF
from zun.db import models

CONFIG_DEFAULTS = {"containers": 40, "memory": 51200, "cpu": 20, "disk": 100}


def _container(seed: Seed, project: str, cpu: float, memory: str, disk: int = 0) -> None:
    seed.row(
        models.Container(
            uuid=str(uuid.uuid4()),
            project_id=project,
            cpu=cpu,
            memory=memory,
            disk=disk,
            container_type=0,
        )
    )


def test_defaults_come_from_config_until_a_default_class_exists(api: ApiClient) -> None:
    admin = api.as_admin()
    assert admin.get("/v1/quotas/project-a").json == CONFIG_DEFAULTS
    assert admin.get("/v1/quotas/project-a/defaults").json == CONFIG_DEFAULTS
    assert admin.get("/v1/quota_classes/default").json == CONFIG_DEFAULTS

    r = admin.put("/v1/quota_classes/default", json={"containers": 5, "cpu": "8"})
    assert r.status == 200
    assert r.json == {**CONFIG_DEFAULTS, "containers": 5, "cpu": 8}
    assert admin.get("/v1/quota_classes/default").json == r.json
    assert admin.get("/v1/quotas/project-a/defaults").json == r.json
    assert admin.get("/v1/quotas/project-a").json == r.json
    # Another class does not inherit from "default": its unset resources are the options.
    assert admin.get("/v1/quota_classes/gold").json == CONFIG_DEFAULTS


def test_config_options_change_the_defaults(api: ApiClient) -> None:
    CONF.set_override("memory", 1024, group="quota")
    try:
        assert api.get("/v1/quotas/p1/defaults").json["memory"] == 1024
    finally:
        CONF.clear_override("memory", group="quota")


def test_put_get_delete_a_project(api: ApiClient) -> None:
    admin = api.as_admin()
    r = admin.put("/v1/quotas/project-a", json={"containers": 3, "memory": "2048"})
    assert r.status == 200
    assert r.json == {**CONFIG_DEFAULTS, "containers": 3, "memory": 2048}
    # Query parameters work as well (the schema is a query schema too).
    r = admin.put("/v1/quotas/project-a?disk=7")
    assert r.status == 200 and r.json["disk"] == 7 and r.json["containers"] == 3
    assert admin.get("/v1/quotas/project-a").json == r.json
    assert admin.get("/v1/quotas/project-b").json == CONFIG_DEFAULTS

    r = admin.delete("/v1/quotas/project-a")
    assert r.status == 200 and r.body == b"null"
    assert admin.get("/v1/quotas/project-a").json == CONFIG_DEFAULTS


def test_usages_form_counts_the_projects_containers(api: ApiClient, seed: Seed) -> None:
    _container(seed, "project-a", 0.5, "256", 2)
    _container(seed, "project-a", 1.25, "512", 0)
    _container(seed, "project-b", 4, "4096", 9)
    api.as_admin().put("/v1/quotas/project-a", json={"containers": 10})
    member = api.as_member("project-a")
    # python-zunclient's form; any non-empty value (even "false") selects it, as in Zun.
    for query in ("usages=True", "usages=1", "usages=false"):
        r = member.get(f"/v1/quotas/project-a?{query}")
        assert r.status == 200
        assert r.json == {
            "containers": {"limit": 10, "in_use": 2},
            "memory": {"limit": 51200, "in_use": 768},
            "cpu": {"limit": 20, "in_use": 1.75},
            "disk": {"limit": 100, "in_use": 2},
        }
    assert member.get("/v1/quotas/project-a?usages=").json["containers"] == 10


def test_python_zunclient_calls(api: ApiClient, seed: Seed) -> None:
    """What zunclient.v1.quotas / quota_classes send, as it sends it."""
    admin = api.as_admin()
    # QuotaManager.update: PUT with a JSON body of the given resources.
    assert admin.put("/v1/quotas/p9", json={"cpu": 4, "containers": 2}).status == 200
    # QuotaManager.get(project, usages=True): GET ?usages=True
    r = admin.get("/v1/quotas/p9?usages=True")
    assert r.json["cpu"] == {"limit": 4, "in_use": 0.0}
    # QuotaClassManager.update / get
    assert admin.put("/v1/quota_classes/default", json={"disk": 9}).json["disk"] == 9


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"containers": -2}, "containers"),
        ({"cpu": "abc"}, "cpu"),
        ({"cpu": 1.5}, "cpu"),
        ({"gpus": 1}, None),
    ],
)
def test_bad_values_are_400(api: ApiClient, body: dict, field: str | None) -> None:
    for path in ("/v1/quotas/p1", "/v1/quota_classes/default"):
        r = api.as_admin().put(path, json=body)
        assert r.status == 400, r
        assert r.error["code"] == "container.schema-validation-error"
        if field:
            assert f"'{field}'" in r.error["detail"]
    r = api.as_admin().put("/v1/quotas/p1?containers=x")
    assert r.status == 400
    assert r.error["detail"].startswith("Invalid input for query parameters 'containers'")


def test_policies_and_project_scoping(api: ApiClient, seed: Seed) -> None:
    api.as_admin().put("/v1/quotas/project-b", json={"containers": 1})
    _container(seed, "project-b", 1, "64")
    a = api.as_member("project-a")
    assert a.get("/v1/quotas/project-a").status == 200
    assert a.get("/v1/quotas/project-a/defaults").status == 200
    # A member of A never reads, counts or changes B's quotas.
    for r in (
        a.get("/v1/quotas/project-b"),
        a.get("/v1/quotas/project-b?usages=True"),
        a.get("/v1/quotas/project-b/defaults"),
        a.put("/v1/quotas/project-b", json={"containers": 99}),
        a.put("/v1/quotas/project-a", json={"containers": 99}),
        a.delete("/v1/quotas/project-b"),
        a.delete("/v1/quotas/project-a"),
        a.get("/v1/quota_classes/default"),
        a.put("/v1/quota_classes/default", json={"containers": 99}),
    ):
        assert r.status == 403, r
        assert r.error["code"] == "container.policy-not-authorized"
    assert api.as_admin().get("/v1/quotas/project-b?usages=1").json["containers"] == {
        "limit": 1,
        "in_use": 1,
    }
    assert api.as_admin().get("/v1/quota_classes/default").json == CONFIG_DEFAULTS


def test_quotas_need_a_project(api: ApiClient) -> None:
    assert api.get("/v1/quotas").status == 404
    assert api.at("1.1").get("/v1/quotas/p").status == 200  # every version
    assert api.at("latest").get("/quotas/p/").status == 200


def test_container_create_is_refused_over_quota(api: ApiClient) -> None:
    """The engine behind POST /v1/containers: 403 over-quota with Zun's message."""
    api.as_admin().put("/v1/quotas/project-a", json={"containers": 1})
    member = api.as_member("project-a").at("1.40")
    first = member.post("/v1/containers", json={"image": "busybox", "command": ["true"]})
    assert first.status == 202, first  # no host here: it ends in Error, yet it counts
    r = member.post("/v1/containers", json={"image": "busybox", "command": ["true"]})
    assert r.status == 403, r
    assert r.error["code"] == "container.over-quota"
    assert r.error["detail"] == "Quota exceeded for resources: ['containers']"
    # Project B is not affected by A's usage.
    other = api.as_member("project-b").at("1.40")
    assert other.post("/v1/containers", json={"image": "busybox"}).status == 202
    usage = api.as_admin().get("/v1/quotas/project-a?usages=True").json
    assert usage["containers"] == {"limit": 1, "in_use": 1}
