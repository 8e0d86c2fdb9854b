"""A show reads its container and its host's compute service in ONE statement
(``find_view_row_and_service``) on SQLite, MariaDB and PostgreSQL: the same view columns as
``get_view_row``, and the same health as the list derives (each driver's own datetime and
boolean types)."""

from __future__ import annotations

import datetime
import re

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from zun.common import exception
from zun.common.context import RequestContext
from zun.compute import node_health
from zun.db import engine as db_engine
from zun.db import models
from zun.db.queries import containers as container_q

ADMIN = RequestContext(user_id="u", project_id="p", roles=["admin"], is_admin=True)


def _uuid(i: int) -> str:
    return f"00000000-0000-4000-8000-0000000003{i:02d}"


def _aged(reason: str | None) -> str | None:
    # A down host's reason counts the seconds since its last report: read twice, a second
    # may have passed in between.
    return None if reason is None else re.sub(r"for \d+ s", "for N s", reason)


def test_show_row_and_its_host_health_in_one_statement(backend: Engine) -> None:
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    services = {"up": {"last_seen_up": now},
                "late": {"last_seen_up": now - datetime.timedelta(seconds=100)},
                "forced": {"last_seen_up": now, "forced_down": True},
                "noengine": {"last_seen_up": now, "disabled": True,
                             "disabled_reason": "AUTO: the engine does not answer"},
                "operator": {"last_seen_up": now, "disabled": True,
                             "disabled_reason": "maintenance"}}
    hosts = [*services, "unregistered", None]
    with db_engine.transaction() as session:
        for host, values in services.items():
            session.add(models.ZunService(host=host, binary="zun-compute", report_count=1,
                                          **values))
        # Another binary on the same host must not add a row to the join.
        session.add(models.ZunService(host="up", binary="zun-wsproxy", report_count=1))
        for i, host in enumerate(hosts):
            session.add(models.Container(uuid=_uuid(i), name=host or "nohost", project_id="p",
                                         user_id="u", container_type=0, host=host,
                                         status="Running", labels={"a": "b"}, cpu=0.5))
    unhealthy = node_health.read_unhealthy()
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args):  # noqa: ANN001
        statements.append(statement)

    sa.event.listen(backend, "before_cursor_execute", count)
    try:
        found = {}
        for i, host in enumerate(hosts):
            with db_engine.single_read() as conn:
                found[host] = container_q.find_view_row_and_service(conn, ADMIN, _uuid(i))
    finally:
        sa.event.remove(backend, "before_cursor_execute", count)
    if backend.dialect.name == "sqlite":
        assert len(statements) == len(hosts), statements  # no BEGIN, no second query
    for i, host in enumerate(hosts):
        row, data, service = found[host]
        with db_engine.transaction(readonly=True) as session:
            assert data == container_q.get_view_row(session, _uuid(i))._asdict()
        assert row.uuid == _uuid(i) and row.host == host
        assert (service is None) == (host not in services)
        up, reason = node_health.service_health(service)
        assert _aged(reason) == _aged(unhealthy.get(host))
        assert up == (host in {"up", "noengine", "operator"})


def test_show_lookup_scoping_and_errors(backend: Engine) -> None:
    with db_engine.transaction() as session:
        for i, (name, project) in enumerate([("a", "p"), ("twin", "p"), ("twin", "p"),
                                             ("other", "q")]):
            session.add(models.Container(uuid=_uuid(i), name=name, project_id=project,
                                         user_id="u", container_type=0, status="Creating"))
    member = RequestContext(user_id="u", project_id="p", roles=["member"], is_admin=False)
    with db_engine.single_read() as conn:
        assert container_q.find_view_row_and_service(conn, member, "a")[1]["uuid"] == _uuid(0)
    with db_engine.single_read() as conn, pytest.raises(exception.Conflict):
        container_q.find_view_row_and_service(conn, member, "twin")
    for ident in (_uuid(3), "other", _uuid(9)):
        with db_engine.single_read() as conn, pytest.raises(exception.ZunException) as err:
            container_q.find_view_row_and_service(conn, member, ident)
        assert err.value.code == 404
    with db_engine.single_read() as conn:
        assert container_q.find_view_row_and_service(conn, ADMIN, "other")[1]["uuid"] == \
            _uuid(3)
