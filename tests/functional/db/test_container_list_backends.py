"""The list's rows (JSON columns read as stored text) encode to the bytes of the dict view
built from the decoded row, on SQLite, MariaDB and PostgreSQL (each driver's own types for
floats, booleans and dates), for rows written the old way before migration 8d2e6f1a4c57 made
their JSON texts canonical and for rows written through the models after it."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from unit.api.apptesting import init_config

from zun.api.views import containers as views
from zun.common.context import RequestContext
from zun.db import engine as db_engine
from zun.db import migration, models, paging, types
from zun.db.queries import containers as container_q

BEFORE_CANONICAL = "5e4c1d7a9b32"
# The revision before the JSON texts were made canonical (8d2e6f1a4c57): the tests write old
# rows, then upgrade.
BACKEND_REVISION = BEFORE_CANONICAL
# JSON texts as Zun (", " separators, ASCII escapes), old releases (plain strings), or hand
# edits (raw non-ASCII, padding, other escapes, duplicate keys) left them. (Zun's tables are
# utf8mb3 on MariaDB: a 4-byte character is stored escaped.)
OLD_JSON = {
    "labels": '{"a": "1", "\\u00e9": "\\ud83d\\ude00 €", "n": {"deep": [1, 2.50, null]}}',
    "command": "sleep 100",
    "environment": ' {"K": "caf\\u00E9\\/", "K": "last"} ',
    "addresses": '{"net": [{"addr": "10.0.0.3", "version": 4, "preserve_on_delete": false}]}',
    "ports": "[]",
    "restart_policy": "null",
    "security_groups": '["default", "sg-ü"]',
    "healthcheck": '{"test": "true", "interval": 1E1}',
    "entrypoint": "",
}


def _old_rows(engine: Engine) -> None:
    columns = [
        "uuid",
        "name",
        "project_id",
        "user_id",
        "container_type",
        "host",
        "status",
        "interactive",
        "privileged",
        *OLD_JSON,
    ]
    with engine.begin() as conn:
        for i, values in enumerate([OLD_JSON, dict.fromkeys(OLD_JSON, "{}")]):
            row = {
                "uuid": f"00000000-0000-4000-8000-00000000010{i}",
                "name": f"old{i}",
                "project_id": "p",
                "user_id": "u",
                "container_type": 0,
                "host": "node1",
                "status": "Running",
                "interactive": False,
                "privileged": False,
                **values,
            }
            conn.execute(
                sa.text(
                    f"INSERT INTO container ({', '.join(columns)}) VALUES "
                    f"({', '.join(':' + c for c in columns)})"
                ),
                row,
            )


VALUES: list[dict[str, Any]] = [
    {
        "labels": {"é": "ü", "q": 'a"b'},
        "command": ["sh", "-c", "echo \\ /"],
        "cpu": 0.1,
        "environment": {},
        "addresses": {"net": [{"addr": "10.0.0.2", "version": 4}]},
        "interactive": True,
        "privileged": False,
        "disk": 5,
        "cpu_policy": "dedicated",
        "created_at": datetime.datetime(2026, 1, 2, 3, 4, 5, 6789),
        "updated_at": datetime.datetime(2026, 1, 2, 3, 4, 5),
    },
    {
        "labels": None,
        "command": None,
        "cpu": None,
        "interactive": None,
        "disk": None,
        "name": "ünï \U0001f600",
        "status_reason": "line\nbreak\t\x01",
        "created_at": None,
    },
    {
        "ports": [80, 443],
        "security_groups": ["default"],
        "healthcheck": {"test": "true"},
        "restart_policy": {"Name": "on-failure", "MaximumRetryCount": "3"},
        "cpu": 2.0,
        "auto_remove": True,
        "tty": False,
        "entrypoint": ["/init"],
        "runtime": "runc",
    },
]


def test_list_rows_encode_as_the_decoded_view(backend: Engine) -> None:
    init_config()  # the field rules are read through oslo.policy
    _old_rows(backend)
    migration.upgrade(engine=backend)
    with db_engine.transaction() as session:
        for i, values in enumerate(VALUES):
            session.add(
                models.Container(
                    uuid=f"00000000-0000-4000-8000-00000000000{i}",
                    name=values.pop("name", f"c{i}"),
                    project_id="p",
                    user_id="u",
                    container_type=0,
                    host="node1",
                    status="Running",
                    **values,
                )
            )
    context = RequestContext(user_id="u", project_id="p", roles=["admin"], is_admin=True)
    page = paging.Page(limit=10, marker=None, sort_key="id", sort_dir="asc", resource_url=None)
    with db_engine.transaction(readonly=True) as session:
        rows = container_q.list_for_view(session, context, all_projects=True, filters={}, page=page)
        decoded = [container_q.get_view_row(session, row[0]) for row in rows]
    assert len(rows) == 2 + len(VALUES)
    json_texts = [row[i] for row in rows for i in container_q.JSON_INDEXES]
    assert any(
        isinstance(text, str) and text.startswith("{") for text in json_texts
    )  # JSON columns arrive as their text
    # Every stored text is canonical, the old rows' too (the migration rewrote them).
    assert all(text == types.canonical_text(text) for text in json_texts)
    items, last = views.encode_page(context, rows)
    fmt = views.formatter(context)
    assert items == [json.dumps(fmt(row), separators=(",", ":")) for row in decoded]
    assert last == fmt(decoded[-1])
    old = json.loads(items[0])
    assert old["labels"] == {"a": "1", "é": "😀 €", "n": {"deep": [1, 2.5, None]}}
    assert old["command"] == "sleep 100"
    assert old["environment"] == {"K": "last"}
    assert old["healthcheck"] == {"test": "true", "interval": 10.0}
    assert (old["ports"], old["restart_policy"], old["entrypoint"]) == ([], {}, [])
    assert (
        '"labels":{"a":"1","\\u00e9":"\\ud83d\\ude00 \\u20ac","n":{"deep":[1,2.5,null]}}'
        in items[0]
    )


def test_the_migration_keeps_every_value(backend: Engine) -> None:
    """What the columns' type reads from the old rows is the same before and after the
    rewrite. (Columns, not entities: a MutableList refuses the plain-string command.)"""
    _old_rows(backend)
    names = list(OLD_JSON)

    def read() -> list[tuple[Any, ...]]:
        with db_engine.transaction(readonly=True) as session:
            return [
                tuple(row)
                for row in session.execute(
                    sa.select(*(getattr(models.Container, n) for n in names)).order_by(
                        models.Container.id
                    )
                )
            ]

    before = read()
    migration.upgrade(engine=backend)
    assert read() == before
    with backend.connect() as conn:
        stored = conn.execute(
            sa.text(f"SELECT {', '.join(names)} FROM container ORDER BY id")
        ).all()
    assert stored[0][names.index("environment")] == '{"K":"last"}'
    assert stored[0][names.index("command")] == '"sleep 100"'
    assert stored[0][names.index("entrypoint")] == '""'
    assert all(text == types.canonical_text(text) for row in stored for text in row)


def test_status_filter_derives_unknown_from_the_host_health(backend: Engine) -> None:
    """``?status=`` agrees with the status shown (Unknown on an unhealthy host): the SQL
    condition of zun.db.queries.host_health, each backend's own datetime and boolean types."""
    init_config()
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    services = {
        "up": {"last_seen_up": now},
        "late": {"last_seen_up": now - datetime.timedelta(seconds=100)},
        "forced": {"last_seen_up": now, "forced_down": True},
        "never": {
            "last_seen_up": None,
            "updated_at": None,
            "created_at": now - datetime.timedelta(days=1),
        },
        "noengine": {
            "last_seen_up": now,
            "disabled": True,
            "disabled_reason": "AUTO: the engine does not answer",
        },
        "operator": {"last_seen_up": now, "disabled": True, "disabled_reason": "maintenance"},
    }
    with db_engine.transaction() as session:
        for host, values in services.items():
            session.add(
                models.ZunService(host=host, binary="zun-compute", report_count=1, **values)
            )
        for i, host in enumerate([*services, "unregistered", None]):
            session.add(
                models.Container(
                    uuid=f"00000000-0000-4000-8000-0000000001{i:02d}",
                    name=host or "nohost",
                    project_id="p",
                    user_id="u",
                    container_type=0,
                    host=host,
                    status="Running",
                )
            )
        session.add(
            models.Container(
                uuid="00000000-0000-4000-8000-000000000200",
                name="failed",
                project_id="p",
                user_id="u",
                container_type=0,
                host="late",
                status="Error",
            )
        )
    context = RequestContext(user_id="u", project_id="p", roles=["admin"], is_admin=True)
    page = paging.Page(limit=50, marker=None, sort_key="id", sort_dir="asc", resource_url=None)
    name = container_q.ROW_INDEX["name"]

    def names(status: str) -> set[str]:
        with db_engine.transaction(readonly=True) as session:
            return {
                row[name]
                for row in container_q.list_for_view(
                    session, context, all_projects=True, filters={"status": status}, page=page
                )
            }

    assert names("Running") == {"up", "operator", "unregistered", "nohost"}
    assert names("Unknown") == {"late", "forced", "never", "noengine"}
    assert names("Error") == {"failed"}


@pytest.mark.parametrize("sort_dir", ["asc", "desc"])
def test_pages_sorted_by_a_date_follow_their_markers(backend: Engine, sort_dir: str) -> None:
    """The marker row's dates are what the list reads (text on MariaDB/MySQL): paging on
    ``created_at`` after it still walks every row once, in order."""
    init_config()
    migration.upgrade(engine=backend)
    base = datetime.datetime(2026, 3, 4, 5, 6, 7)
    offsets = [3, 0, 3, 1, None, 2]  # two rows at the same second: the id breaks the tie
    with db_engine.transaction() as session:
        for i, offset in enumerate(offsets):
            created = None if offset is None else base + datetime.timedelta(seconds=offset)
            session.add(
                models.Container(
                    uuid=f"00000000-0000-4000-8000-00000000030{i}",
                    name=f"d{i}",
                    project_id="p",
                    user_id="u",
                    container_type=0,
                    status="Running",
                    created_at=created,
                )
            )
    context = RequestContext(user_id="u", project_id="p", roles=["admin"], is_admin=True)
    seen: list[str] = []
    marker = None
    while True:
        page = paging.Page(
            limit=2, marker=marker, sort_key="created_at", sort_dir=sort_dir, resource_url=None
        )
        with db_engine.transaction(readonly=True) as session:
            rows = container_q.list_for_view(
                session, context, all_projects=True, filters={}, page=page
            )
        if not rows:
            break
        seen += [row[0] for row in rows]
        marker = rows[-1][0]
        if backend.dialect.name in ("mysql", "mariadb"):  # the marker's date is text there
            assert all(
                isinstance(row[container_q.ROW_INDEX["created_at"]], str | None) for row in rows
            )
    dated = sorted((offset, i) for i, offset in enumerate(offsets) if offset is not None)
    expected = [f"00000000-0000-4000-8000-00000000030{i}" for _, i in dated]
    undated = "00000000-0000-4000-8000-000000000304"
    # NULL sorts first ascending on MariaDB and SQLite, last on PostgreSQL: only its place
    # among the dated rows is the database's.
    assert [u for u in seen if u != undated] == (expected if sort_dir == "asc" else expected[::-1])
    assert sorted(seen) == sorted([*expected, undated])
