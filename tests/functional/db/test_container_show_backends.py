"""A show reads its container and its host's compute service in ONE statement
(``find_view_row_and_service``) on SQLite, MariaDB and PostgreSQL, run straight on the driver
(``zun.db.direct_select``): the same view columns as ``get_view_row``, the very values and
types SQLAlchemy's own execution of that statement gives (each driver's datetime, boolean and
JSON columns), the same health as the list derives, and the SQLAlchemy path when the driver
fails."""

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
    services = {
        "up": {"last_seen_up": now},
        "late": {"last_seen_up": now - datetime.timedelta(seconds=100)},
        "forced": {"last_seen_up": now, "forced_down": True},
        "noengine": {
            "last_seen_up": now,
            "disabled": True,
            "disabled_reason": "AUTO: the engine does not answer",
        },
        "operator": {"last_seen_up": now, "disabled": True, "disabled_reason": "maintenance"},
    }
    hosts = [*services, "unregistered", None]
    with db_engine.transaction() as session:
        for host, values in services.items():
            session.add(
                models.ZunService(host=host, binary="zun-compute", report_count=1, **values)
            )
        # Another binary on the same host must not add a row to the join.
        session.add(models.ZunService(host="up", binary="zun-wsproxy", report_count=1))
        for i, host in enumerate(hosts):
            session.add(
                models.Container(
                    uuid=_uuid(i),
                    name=host or "nohost",
                    project_id="p",
                    user_id="u",
                    container_type=0,
                    host=host,
                    status="Running",
                    labels={"a": "b"},
                    cpu=0.5,
                )
            )
    unhealthy = node_health.read_unhealthy()
    statements: list[str] = []
    if backend.dialect.name == "sqlite":
        # The direct path passes no SQLAlchemy event: count what the driver itself runs, on
        # connections opened from here on.
        backend.dispose()
        sa.event.listen(
            backend,
            "connect",
            lambda dbapi_con, _rec: dbapi_con.set_trace_callback(statements.append),
        )
    found = {
        host: container_q.find_view_row_and_service(ADMIN, _uuid(i)) for i, host in enumerate(hosts)
    }
    if backend.dialect.name == "sqlite":
        selects = [s for s in statements if not s.startswith("PRAGMA")]
        assert len(selects) == len(hosts), selects  # no BEGIN, no second query, no ROLLBACK
    stmt = container_q._find_view_service_stmt(True, True)
    for i, host in enumerate(hosts):
        row, data, service = found[host]
        with db_engine.single_read() as conn:
            through_sqlalchemy = conn.execute(stmt, {"ident": _uuid(i)}).one()
        assert tuple(row) == tuple(through_sqlalchemy)
        assert [type(v) for v in row] == [type(v) for v in through_sqlalchemy]
        assert row._asdict() == through_sqlalchemy._asdict()
        with db_engine.transaction(readonly=True) as session:
            assert data == container_q.get_view_row(session, _uuid(i))._asdict()
        assert row.uuid == _uuid(i) and row.host == host
        assert (service is None) == (host not in services)
        up, reason = node_health.service_health(service)
        assert _aged(reason) == _aged(unhealthy.get(host))
        assert up == (host in {"up", "noengine", "operator"})


def test_a_driver_error_takes_the_sqlalchemy_path(
    backend: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    with db_engine.transaction() as session:
        session.add(
            models.Container(
                uuid=_uuid(0),
                name="a",
                project_id="p",
                user_id="u",
                container_type=0,
                status="Creating",
                labels={"a": "b"},
            )
        )
    expected = container_q.find_view_row_and_service(ADMIN, _uuid(0))
    select = container_q._find_view_service(True, True)
    plan = select._plan(backend)
    assert plan is not None
    # A statement the driver refuses: the connection is dropped, SQLAlchemy answers.
    monkeypatch.setitem(select._plans, backend.dialect, plan._replace(sql="SELECT nonsense"))
    before = backend.pool.checkedout()
    row, data, service = container_q.find_view_row_and_service(ADMIN, _uuid(0))
    assert isinstance(row, sa.Row)  # SQLAlchemy's row: the fallback ran
    assert (tuple(row), data, service) == (tuple(expected[0]), expected[1], expected[2])
    assert backend.pool.checkedout() == before
    monkeypatch.undo()
    assert container_q.find_view_row_and_service(ADMIN, _uuid(0))[1] == data


def test_show_lookup_scoping_and_errors(backend: Engine) -> None:
    with db_engine.transaction() as session:
        for i, (name, project) in enumerate(
            [("a", "p"), ("twin", "p"), ("twin", "p"), ("other", "q")]
        ):
            session.add(
                models.Container(
                    uuid=_uuid(i),
                    name=name,
                    project_id=project,
                    user_id="u",
                    container_type=0,
                    status="Creating",
                )
            )
    member = RequestContext(user_id="u", project_id="p", roles=["member"], is_admin=False)
    assert container_q.find_view_row_and_service(member, "a")[1]["uuid"] == _uuid(0)
    with pytest.raises(exception.Conflict):
        container_q.find_view_row_and_service(member, "twin")
    for ident in (_uuid(3), "other", _uuid(9)):
        with pytest.raises(exception.ZunException) as err:
            container_q.find_view_row_and_service(member, ident)
        assert err.value.code == 404
    assert container_q.find_view_row_and_service(ADMIN, "other")[1]["uuid"] == _uuid(3)
