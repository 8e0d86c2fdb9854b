"""The list's rows (JSON columns read as stored text) encode to the bytes of the dict view
built from the decoded row, on SQLite, MariaDB and PostgreSQL (each driver's own types for
floats, booleans and dates)."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from unit.api.apptesting import init_config

from zun.api.views import containers as views
from zun.common.context import RequestContext
from zun.db import engine as db_engine
from zun.db import migration, models, paging
from zun.db.queries import containers as container_q


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("mariadb", marks=pytest.mark.mariadb),
        pytest.param("postgresql", marks=pytest.mark.postgresql),
    ]
)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'zun.sqlite'}"
    else:
        url = request.getfixturevalue(f"{request.param}_url")()
    migration.upgrade(url=url)
    engine = db_engine.create_engine(url)
    db_engine.set_engine(engine)
    yield engine
    db_engine.dispose()


VALUES: list[dict[str, Any]] = [
    {"labels": {"é": "ü", "q": 'a"b'}, "command": ["sh", "-c", "echo \\ /"], "cpu": 0.1,
     "environment": {}, "addresses": {"net": [{"addr": "10.0.0.2", "version": 4}]},
     "interactive": True, "privileged": False, "disk": 5, "cpu_policy": "dedicated",
     "created_at": datetime.datetime(2026, 1, 2, 3, 4, 5, 6789),
     "updated_at": datetime.datetime(2026, 1, 2, 3, 4, 5)},
    {"labels": None, "command": None, "cpu": None, "interactive": None, "disk": None,
     "name": "ünï \U0001f600", "status_reason": "line\nbreak\t\x01", "created_at": None},
    {"ports": [80, 443], "security_groups": ["default"], "healthcheck": {"test": "true"},
     "restart_policy": {"Name": "on-failure", "MaximumRetryCount": "3"}, "cpu": 2.0,
     "auto_remove": True, "tty": False, "entrypoint": ["/init"], "runtime": "runc"},
]


def test_list_rows_encode_as_the_decoded_view(backend: Engine) -> None:
    init_config()  # the field rules are read through oslo.policy
    with db_engine.transaction() as session:
        for i, values in enumerate(VALUES):
            session.add(models.Container(uuid=f"00000000-0000-4000-8000-00000000000{i}",
                                         name=values.pop("name", f"c{i}"), project_id="p",
                                         user_id="u", container_type=0, host="node1",
                                         status="Running", **values))
        # A value as an old Zun release wrote it: with spaces, and a plain string.
        session.flush()
        session.execute(sa.update(models.Container)
                        .where(models.Container.uuid.endswith("1"))
                        .values(labels=sa.literal_column("'{\"a\": \"1\"}'"),
                                command=sa.literal_column("'sleep 100'")))
    context = RequestContext(user_id="u", project_id="p", roles=["admin"], is_admin=True)
    page = paging.Page(limit=10, marker=None, sort_key="id", sort_dir="asc",
                       resource_url=None)
    with db_engine.transaction(readonly=True) as session:
        rows = container_q.list_for_view(session, context, all_projects=True, filters={},
                                         page=page)
        decoded = [container_q.get_view_row(session, row[0]) for row in rows]
    assert any(isinstance(value, str) and value.startswith("{")
               for value in rows[0])  # JSON columns arrive as their text
    items, last = views.encode_page(context, rows)
    fmt = views.formatter(context)
    assert items == [json.dumps(fmt(row), separators=(",", ":")) for row in decoded]
    assert last == fmt(decoded[-1])
    assert json.loads(items[1])["labels"] == {"a": "1"}
    assert json.loads(items[1])["command"] == "sleep 100"


def test_status_filter_derives_unknown_from_the_host_health(backend: Engine) -> None:
    """``?status=`` agrees with the status shown (Unknown on an unhealthy host): the SQL
    condition of zun.db.queries.host_health, each backend's own datetime and boolean types."""
    init_config()
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    services = {"up": {"last_seen_up": now},
                "late": {"last_seen_up": now - datetime.timedelta(seconds=100)},
                "forced": {"last_seen_up": now, "forced_down": True},
                "never": {"last_seen_up": None, "updated_at": None,
                          "created_at": now - datetime.timedelta(days=1)},
                "noengine": {"last_seen_up": now, "disabled": True,
                             "disabled_reason": "AUTO: the engine does not answer"},
                "operator": {"last_seen_up": now, "disabled": True,
                             "disabled_reason": "maintenance"}}
    with db_engine.transaction() as session:
        for host, values in services.items():
            session.add(models.ZunService(host=host, binary="zun-compute", report_count=1,
                                          **values))
        for i, host in enumerate([*services, "unregistered", None]):
            session.add(models.Container(uuid=f"00000000-0000-4000-8000-0000000001{i:02d}",
                                         name=host or "nohost", project_id="p", user_id="u",
                                         container_type=0, host=host, status="Running"))
        session.add(models.Container(uuid="00000000-0000-4000-8000-000000000200",
                                     name="failed", project_id="p", user_id="u",
                                     container_type=0, host="late", status="Error"))
    context = RequestContext(user_id="u", project_id="p", roles=["admin"], is_admin=True)
    page = paging.Page(limit=50, marker=None, sort_key="id", sort_dir="asc",
                       resource_url=None)
    name = container_q.ROW_INDEX["name"]

    def names(status: str) -> set[str]:
        with db_engine.transaction(readonly=True) as session:
            return {row[name] for row in container_q.list_for_view(
                session, context, all_projects=True, filters={"status": status}, page=page)}

    assert names("Running") == {"up", "operator", "unregistered", "nohost"}
    assert names("Unknown") == {"late", "forced", "never", "noengine"}
    assert names("Error") == {"failed"}
