"""/v1/registries through the real WSGI pipeline and a migrated database."""

from __future__ import annotations

import logging
import uuid

import pytest
import sqlalchemy as sa
from unit.api.apptesting import ApiClient, Seed

from zun.common import crypt
from zun.db import engine, models

SECRET = "S3cr3t-registry-pässword"
VIEW_KEYS = ["uuid", "name", "domain", "username", "password", "project_id", "user_id"]


def _create(client: ApiClient, name: str = "reg1", **extra: str) -> dict:
    body = {
        "registry": {
            "name": name,
            "domain": "registry.example.com:5000",
            "username": "alice",
            "password": SECRET,
            **extra,
        }
    }
    r = client.post("/v1/registries", json=body)
    assert r.status == 201, r
    return r.json["registry"]


def _stored_password(registry_uuid: str) -> str:
    with engine.transaction(readonly=True) as session:
        return session.scalar(
            sa.select(models.Registry.password).where(models.Registry.uuid == registry_uuid)
        )


def test_create_show_and_the_stored_password(api: ApiClient) -> None:
    member = api.as_member("project-a", user="alice-id")
    r = member.post(
        "/v1/registries",
        json={
            "registry": {
                "name": "reg1",
                "domain": "registry.example.com:5000",
                "username": "alice",
                "password": SECRET,
            }
        },
    )
    assert r.status == 201
    reg = r.json["registry"]
    assert r.headers["Location"] == f"http://zun.test:9517/v1/registries/{reg['uuid']}"
    assert sorted(reg) == sorted([*VIEW_KEYS, "links"])
    assert reg["password"] == "***"
    assert (reg["project_id"], reg["user_id"], reg["username"]) == (
        "project-a",
        "alice-id",
        "alice",
    )
    # Stored as a Fernet token under auth_encryption_key, readable the way Zun reads it.
    token = _stored_password(reg["uuid"])
    assert SECRET not in token and crypt.decrypt(token) == SECRET

    for ident in (reg["uuid"], "reg1"):
        r = member.get(f"/v1/registries/{ident}")
        assert r.status == 200
        assert r.json["registry"]["password"] == "***"
        assert (
            r.json["registry"]["links"][1]["href"]
            == f"http://zun.test:9517/registries/{reg['uuid']}"
        )
    assert SECRET not in member.get("/v1/registries").body.decode()


def test_password_is_optional_and_never_logged(
    api: ApiClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    reg = _create(api.as_member("project-a"))
    api.as_member("project-a").patch(
        f"/v1/registries/{reg['uuid']}", json={"registry": {"password": SECRET + "2"}}
    )
    api.as_member("project-a").post(
        "/v1/registries", json={"registry": {"domain": "x", "password": SECRET}}
    )
    api.as_member("project-a").post(
        "/v1/registries", json={"registry": {"domain": "", "password": SECRET}}
    )
    assert caplog.records  # the requests were logged...
    text = "\n".join(r.getMessage() for r in caplog.records) + caplog.text
    assert SECRET not in text  # ...without the password
    r = api.as_member("project-a").post("/v1/registries", json={"registry": {"domain": "d"}})
    assert r.status == 201 and r.json["registry"]["password"] == "***"
    assert _stored_password(r.json["registry"]["uuid"]) is None


def test_update_and_delete(api: ApiClient) -> None:
    member = api.as_member("project-a")
    reg = _create(member)
    r = member.patch(
        f"/v1/registries/{reg['uuid']}",
        json={"registry": {"name": "renamed", "password": "new-pass"}},
    )
    assert r.status == 200
    assert r.json["registry"]["name"] == "renamed"
    assert r.json["registry"]["password"] == "***"
    assert crypt.decrypt(_stored_password(reg["uuid"])) == "new-pass"
    assert member.delete("/v1/registries/renamed").status == 204
    r = member.get(f"/v1/registries/{reg['uuid']}")
    assert r.status == 404 and r.error["code"] == "container.registry-not-found"


def test_registry_used_by_a_container_cannot_be_deleted(api: ApiClient, seed: Seed) -> None:
    member = api.as_member("project-a")
    reg = _create(member)
    with engine.transaction(readonly=True) as session:
        reg_id = session.scalar(
            sa.select(models.Registry.id).where(models.Registry.uuid == reg["uuid"])
        )
    seed.row(models.Container(uuid=str(uuid.uuid4()), project_id="project-a", registry_id=reg_id))
    r = member.delete(f"/v1/registries/{reg['uuid']}")
    assert r.status == 409 and r.error["code"] == "container.conflict"


def test_list_pagination_filters_and_unknown_parameters(api: ApiClient) -> None:
    member = api.as_member("project-a")
    made = [_create(member, f"reg{i}") for i in range(3)]
    r = member.get("/v1/registries")
    assert r.status == 200
    assert [x["uuid"] for x in r.json["registries"]] == [m["uuid"] for m in made]
    assert "links" not in r.json["registries"][0]
    assert r.json["next"] is None
    r = member.get("/v1/registries?limit=2")
    assert len(r.json["registries"]) == 2
    assert r.json["next"] == (
        "http://zun.test:9517/v1/registries?sort_key=id&sort_dir=asc"
        f"&limit=2&marker={made[1]['uuid']}"
    )
    r = member.get(f"/v1/registries?limit=2&marker={made[1]['uuid']}")
    assert [x["name"] for x in r.json["registries"]] == ["reg2"]
    assert [x["name"] for x in member.get("/v1/registries?name=reg1").json["registries"]] == [
        "reg1"
    ]
    assert [
        x["name"]
        for x in member.get("/v1/registries?sort_key=name&sort_dir=desc").json["registries"]
    ] == ["reg2", "reg1", "reg0"]

    r = member.get("/v1/registries?foo=1&bar=2")
    assert r.status == 400 and r.error["code"] == "container.invalid-value"
    assert r.error["detail"] == "Unknown parameters: foo, bar"
    for query, code in (
        ("limit=0", "container.invalid-value"),
        ("sort_dir=up", "container.invalid-value"),
        ("sort_key=nope", "container.invalid-parameter-value"),
        ("all_projects=maybe", "container.invalid-value"),
    ):
        r = member.get(f"/v1/registries?{query}")
        assert (r.status, r.error["code"]) == (400, code), (query, r)
    r = member.get(f"/v1/registries?marker={uuid.uuid4()}")
    assert r.status == 404 and r.error["code"] == "container.registry-not-found"


def test_two_projects_never_see_each_other(api: ApiClient) -> None:
    a, b = api.as_member("project-a"), api.as_member("project-b")
    reg_a = _create(a, "shared-name")
    reg_b = _create(b, "shared-name")
    assert [x["uuid"] for x in a.get("/v1/registries").json["registries"]] == [reg_a["uuid"]]
    assert a.get("/v1/registries?project_id=project-b").json["registries"] == []
    for r in (
        a.get(f"/v1/registries/{reg_b['uuid']}"),
        a.patch(f"/v1/registries/{reg_b['uuid']}", json={"registry": {"name": "x1"}}),
        a.delete(f"/v1/registries/{reg_b['uuid']}"),
    ):
        assert r.status == 404 and r.error["code"] == "container.registry-not-found", r
    assert a.get(f"/v1/registries/{reg_b['uuid']}/").status == 404
    # By name, each member finds its own.
    assert a.get("/v1/registries/shared-name").json["registry"]["uuid"] == reg_a["uuid"]
    # all_projects is for admins.
    r = a.get("/v1/registries?all_projects=True")
    assert r.status == 403 and r.error["code"] == "container.policy-not-authorized"

    admin = api.as_admin()
    assert admin.get("/v1/registries").json["registries"] == []  # its own project only
    listed = admin.get("/v1/registries?all_projects=1").json["registries"]
    assert {x["uuid"] for x in listed} == {reg_a["uuid"], reg_b["uuid"]}
    # Admins reach any project's registry by UUID; a name shared by two projects is a 409.
    assert admin.get(f"/v1/registries/{reg_b['uuid']}").status == 200
    r = admin.get("/v1/registries/shared-name")
    assert r.status == 409 and r.error["code"] == "container.conflict"
    assert "Multiple registries exist with same name" in r.error["detail"]
    r = admin.patch(f"/v1/registries/{reg_b['uuid']}", json={"registry": {"name": "by-admin"}})
    assert r.status == 200 and r.json["registry"]["project_id"] == "project-b"
    assert admin.delete(f"/v1/registries/{reg_a['uuid']}").status == 204


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"domain": "flat"}, "'registry' is a required property"),
        ({"registry": {"name": "x1"}}, "'domain' is a required property"),
        ({"registry": {"domain": ""}}, "'domain'"),
        ({"registry": {"domain": "d", "name": "-bad"}}, "does not match"),
        ({"registry": {"domain": "d", "email": "e"}}, "Additional properties"),
        ({"registry": {"domain": "d"}, "extra": 1}, "Additional properties"),
    ],
)
def test_create_validation(api: ApiClient, body: dict, detail: str) -> None:
    r = api.as_member("project-a").post("/v1/registries", json=body)
    assert r.status == 400, r
    assert r.error["code"] == "container.schema-validation-error"
    assert detail in r.error["detail"]


def test_create_needs_json_and_update_validates(api: ApiClient) -> None:
    member = api.as_member("project-a")
    r = member.post("/v1/registries", body=b"registry=x", content_type="text/plain")
    assert r.status == 415
    reg = _create(member)
    r = member.patch(f"/v1/registries/{reg['uuid']}", json={"registry": {"password": ""}})
    assert r.status == 400 and r.error["code"] == "container.schema-validation-error"
    r = member.patch(f"/v1/registries/{reg['uuid']}", json={"name": "flat"})
    assert r.status == 400
    r = member.patch(f"/v1/registries/{uuid.uuid4()}", json={"registry": {"name": "ab"}})
    assert r.status == 404


def test_every_version_and_url_form(api: ApiClient) -> None:
    member = api.as_member("project-a")
    reg = _create(member.at("1.1"))
    for client in (member.at("1.1"), member.at("1.30"), member.at("latest")):
        assert client.get("/v1/registries").status == 200
        assert client.get(f"/registries/{reg['uuid']}.json").status == 200
    assert member.put("/v1/registries").status == 405
