"""zun.api.common: parameters, datetimes, links, and pagination/lookups on a real SQLite DB."""

from __future__ import annotations

import datetime
import uuid

import pytest
import sqlalchemy as sa

from zun.api import common
from zun.common import exception
from zun.common.context import RequestContext
from zun.db import engine, paging
from zun.db.models import Registry


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        ("True", True),
        ("False", False),
        ("true", True),
        ("1", True),
        ("0", False),
        ("YES", True),
        ("off", False),
    ],
)
def test_parse_bool(value: object, expected: bool) -> None:
    assert common.parse_bool(value, "flag") is expected


@pytest.mark.parametrize("value", ["", "2", "maybe", None, 1])
def test_parse_bool_refuses(value: object) -> None:
    with pytest.raises(exception.InvalidValue) as caught:
        common.parse_bool(value, "forced_down")
    assert str(caught.value).startswith("Valid forced_down values are: 1, t, true, on")


def test_python_zunclients_none_string_is_unset() -> None:
    assert common.optional("None") is None
    assert common.optional(None) is None
    assert common.optional("SIGTERM") == "SIGTERM"
    assert common.optional("") == ""
    assert common.optional_int("None") is None
    assert common.optional_int("") is None
    assert common.optional_int("7") == 7


def test_unknown_params_in_request_order() -> None:
    common.check_unknown_params(["limit", "name"], ["limit", "name", "marker"])
    with pytest.raises(exception.InvalidValue) as caught:
        common.check_unknown_params(["zeta", "limit", "alpha"], ["limit"])
    assert str(caught.value) == "Unknown parameters: zeta, alpha"
    assert caught.value.code == 400


def test_require_params() -> None:
    common.require_params({"host": "h", "binary": "b"}, ["host", "binary"])
    with pytest.raises(exception.SchemaValidationError) as caught:
        common.require_params({"host": "h"}, ["host", "binary"])
    assert str(caught.value) == "'binary' is a required property"


def test_datetime_formats() -> None:
    frac = datetime.datetime(2026, 1, 15, 12, 0, 0, 500)
    whole = datetime.datetime(2026, 1, 15, 12, 0, 0)
    assert common.format_datetime(frac) == "2026-01-15 12:00:00.000500"
    assert common.format_datetime(whole) == "2026-01-15 12:00:00"
    assert common.format_iso_datetime(frac) == "2026-01-15T12:00:00.000500"
    assert common.format_iso_datetime(whole) == "2026-01-15T12:00:00.000000"
    aware = datetime.datetime(
        2026, 1, 15, 14, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=2))
    )
    assert common.format_datetime(aware) == "2026-01-15 12:00:00"
    assert common.format_datetime(None) is None and common.format_iso_datetime(None) is None


def test_links_and_location() -> None:
    assert common.links("http://h:1", "hosts", "u") == [
        {"href": "http://h:1/v1/hosts/u", "rel": "self"},
        {"href": "http://h:1/hosts/u", "rel": "bookmark"},
    ]
    assert common.location("http://h", "containers", "u") == "http://h/v1/containers/u"


def test_page_defaults_and_next_link() -> None:
    page = common.page_params({}, default_sort_key="hostname")
    assert page == paging.Page(limit=1000, marker=None, sort_key="hostname", sort_dir="asc")
    page = common.page_params({"limit": "2", "sort_dir": "desc", "resource_url": "things"})
    items = [{"uuid": "a"}, {"uuid": "b"}]
    assert common.next_link("http://h", "hosts", page, items) == (
        "http://h/v1/things?sort_key=id&sort_dir=desc&limit=2&marker=b"
    )
    assert common.next_link("http://h", "hosts", page, items[:1]) is None
    assert common.next_link("http://h", "hosts", page, []) is None


@pytest.fixture
def registries(api_db: str) -> list[Registry]:
    rows = [
        Registry(
            uuid=f"00000000-0000-4000-8000-00000000000{i}",
            name=f"r{i % 3}",
            project_id="project-a" if i < 4 else "project-b",
            domain="d",
            user_id="u",
        )
        for i in range(6)
    ]
    with engine.transaction() as session:
        session.add_all(rows)
    return rows


def _ctx(project: str, admin: bool = False) -> RequestContext:
    return RequestContext(
        project_id=project, user_id="u", is_admin=admin, roles=["admin"] if admin else ["member"]
    )


def _not_found(ident: str) -> Exception:
    return exception.RegistryNotFound(registry=ident)


def test_paginate_is_keyset_and_scoped(registries: list[Registry]) -> None:
    ctx = _ctx("project-a")
    stmt = paging.project_scope(sa.select(Registry), Registry, ctx)
    with engine.transaction(readonly=True) as session:
        first = paging.paginate(
            session, stmt, Registry, common.page_params({"limit": "3"}), not_found=_not_found
        )
        assert [r.uuid[-1] for r in first] == ["0", "1", "2"]
        rest = paging.paginate(
            session,
            stmt,
            Registry,
            common.page_params({"limit": "3", "marker": first[-1].uuid}),
            not_found=_not_found,
        )
        assert [r.uuid[-1] for r in rest] == ["3"]
        by_name = paging.paginate(
            session,
            stmt,
            Registry,
            common.page_params({"sort_key": "name", "sort_dir": "desc"}),
            not_found=_not_found,
        )
        assert [(r.name, r.uuid[-1]) for r in by_name] == [
            ("r2", "2"),
            ("r1", "1"),
            ("r0", "3"),
            ("r0", "0"),
        ]
        # A marker from another project is unknown here.
        with pytest.raises(exception.RegistryNotFound):
            paging.paginate(
                session,
                stmt,
                Registry,
                common.page_params({"marker": registries[5].uuid}),
                not_found=_not_found,
            )
        with pytest.raises(exception.InvalidParameterValue) as caught:
            paging.paginate(
                session,
                stmt,
                Registry,
                common.page_params({"sort_key": "nope"}),
                not_found=_not_found,
            )
        assert str(caught.value) == 'The sort_key value "nope" is an invalid field for sorting'


def test_get_by_ident(registries: list[Registry]) -> None:
    kw = {"not_found": _not_found, "singular": "registry", "plural": "registries"}
    with engine.transaction(readonly=True) as session:
        # r1 exists once in project-a (uuid ...1) and once in project-b (uuid ...4).
        assert paging.get_by_ident(
            session, Registry, "r1", context=_ctx("project-a"), **kw
        ).uuid.endswith("1")
        assert paging.get_by_ident(
            session, Registry, "r1", context=_ctx("project-b"), **kw
        ).uuid.endswith("4")
        with pytest.raises(exception.RegistryNotFound):
            paging.get_by_ident(
                session, Registry, registries[5].uuid, context=_ctx("project-a"), **kw
            )
        with pytest.raises(exception.Conflict):
            paging.get_by_ident(session, Registry, "r1", context=_ctx("x", admin=True), **kw)
        # all_projects=False keeps an admin in its own project (registry PATCH).
        with pytest.raises(exception.RegistryNotFound):
            paging.get_by_ident(
                session, Registry, "r1", context=_ctx("x", admin=True), all_projects=False, **kw
            )
        assert (
            paging.get_by_ident(
                session,
                Registry,
                str(uuid.UUID(registries[5].uuid)),
                context=_ctx("x", admin=True),
                **kw,
            ).project_id
            == "project-b"
        )
