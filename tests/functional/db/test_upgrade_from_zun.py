"""A database made by OpenStack Zun at its head upgrades in place and reads through our models.

The database is built from the reference dump itself (Zun's own DDL), stamped 3f2b36231bee as
Zun leaves it, and filled with rows written the way Zun writes them (JSON as text, booleans as
0/1). Then our ``upgrade`` runs and everything is read back through the models.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa
from _db_schema_dump import (
    connect_mariadb,
    create_statements,
    live_tables,
    reference_dump_path,
    schema_differences,
)
from oslo_db import exception as db_exc
from sqlalchemy.orm import selectinload
from unit.api.apptesting import init_config

from zun.api.views import containers as views
from zun.common.context import RequestContext
from zun.db import engine as db_engine
from zun.db import migration, models, paging
from zun.db.queries import containers as container_q

pytestmark = pytest.mark.mariadb

CREATED = datetime.datetime(2023, 5, 4, 3, 2, 1)
CAPSULE_UUID = "0b6b9d3e-2f1a-4d47-9c4e-7b1f0e2a9c01"
MEMBER_UUID = "6f1d2c3b-4a59-4e68-8d7c-9e0f1a2b3c4d"
PLAIN_UUID = "a3c1e5f7-0b2d-4f6a-8c9e-1d3f5a7b9c0e"


def _zun_json(value: object) -> str:
    # Zun stored these with json.dumps defaults (", " and ": " separators).
    return json.dumps(value)


ZUN_ROWS = [
    (
        "INSERT INTO registry (created_at, project_id, user_id, uuid, name, domain, username,"
        " password) VALUES (%s, 'p1', 'u1', 'reg-uuid-1', 'myreg', 'registry.example:5000',"
        " 'alice', 'gAAAAABk-fernet-token')",
        (CREATED,),
    ),
    (
        "INSERT INTO container (created_at, project_id, user_id, uuid, name, image, status,"
        " container_type, host, cpu, memory, labels, annotations, addresses, restart_policy,"
        " interactive, auto_remove, privileged, tty, auto_heal)"
        " VALUES (%s, 'p1', 'u1', %s, 'capsule-1', 'kubernetes/pause', 'Running', 1, 'node-1',"
        " 0.5, '512', %s, %s, %s, %s, 0, 0, 0, 0, 0)",
        (
            CREATED,
            CAPSULE_UUID,
            _zun_json({"app": "web"}),
            _zun_json({"k": "v"}),
            _zun_json(
                {
                    "net-1": [
                        {
                            "addr": "10.0.0.5",
                            "version": 4,
                            "port": "port-1",
                            "subnet_id": "s1",
                            "preserve_on_delete": False,
                        }
                    ]
                }
            ),
            _zun_json({"Name": "always", "MaximumRetryCount": "0"}),
        ),
    ),
    (
        "INSERT INTO container (created_at, updated_at, project_id, user_id, uuid, name, image,"
        " command, entrypoint, status, task_state, environment, ports, security_groups,"
        " healthcheck, exposed_ports, cpuset, host, capsule_id, registry_id, interactive, tty,"
        " started_at, image_driver, image_pull_policy, status_reason, disk)"
        " SELECT %s, %s, 'p1', 'u1', %s, 'member-1', 'registry.example:5000/nginx:1.25',"
        " %s, %s, 'Running', NULL, %s, %s, %s, %s, %s, %s, 'node-1', c.id, r.id, 1, 1, %s,"
        " 'docker', 'ifnotpresent', NULL, 10 FROM container c, registry r"
        " WHERE c.uuid = %s AND r.uuid = 'reg-uuid-1'",
        (
            CREATED,
            CREATED,
            MEMBER_UUID,
            _zun_json(["nginx", "-g", "daemon off;"]),
            _zun_json(["/docker-entrypoint.sh"]),
            _zun_json({"LANG": "C.UTF-8"}),
            _zun_json([{"port": 80, "protocol": "tcp"}]),
            _zun_json(["sg-1"]),
            _zun_json({"test": "curl localhost", "interval": 10, "retries": 3, "timeout": 5}),
            _zun_json({"80/tcp": {}}),
            _zun_json({"cpuset_cpus": "0-1", "cpuset_mems": "0"}),
            CREATED,
            CAPSULE_UUID,
        ),
    ),
    (
        # A container with every optional field left NULL, as old API versions created them.
        "INSERT INTO container (created_at, project_id, user_id, uuid, name, image, status)"
        " VALUES (%s, 'p2', 'u2', %s, 'bare', 'busybox', 'Created')",
        (CREATED, PLAIN_UUID),
    ),
    (
        "INSERT INTO zun_service (created_at, report_count, host, `binary`, disabled,"
        " disabled_reason, last_seen_up, forced_down, availability_zone)"
        " VALUES (%s, 42, 'node-1', 'zun-compute', 0, NULL, %s, 0, 'nova')",
        (CREATED, CREATED),
    ),
    (
        "INSERT INTO compute_node (created_at, uuid, hostname, numa_topology, mem_total,"
        " mem_free, mem_available, total_containers, running_containers, paused_containers,"
        " stopped_containers, cpus, cpu_used, architecture, os_type, os, kernel_version, labels,"
        " mem_used, pci_stats, disk_total, disk_used, runtimes, rp_uuid)"
        " VALUES (%s, 'cn-uuid-1', 'node-1', %s, 8000, 4000, 5000, 2, 1, 0, 1, 4, 0.5,"
        " 'x86_64', 'linux', 'Debian', '6.1.0', %s, 3000, %s, 100, 10, %s, 'rp-uuid-1')",
        (
            CREATED,
            _zun_json({"nodes": [{"id": 0, "cpuset": [0, 1, 2, 3], "pinned_cpus": []}]}),
            _zun_json({"zone": "a"}),
            _zun_json([]),
            _zun_json(["runc"]),
        ),
    ),
    (
        "INSERT INTO container_actions (created_at, action, container_uuid, request_id,"
        " user_id, project_id, start_time) VALUES (%s, 'create', %s, 'req-1', 'u1', 'p1', %s)",
        (CREATED, MEMBER_UUID, CREATED),
    ),
    (
        "INSERT INTO container_actions_events (created_at, event, action_id, start_time,"
        " finish_time, result) SELECT %s, 'compute__do_container_create', id, %s, %s, 'Success'"
        " FROM container_actions WHERE request_id = 'req-1'",
        (CREATED, CREATED, CREATED),
    ),
    (
        "INSERT INTO exec_instance (created_at, container_id, exec_id, token, url)"
        " SELECT %s, id, 'exec-1', 'tok', 'ws://x' FROM container WHERE uuid = %s",
        (CREATED, MEMBER_UUID),
    ),
    (
        "INSERT INTO volume (created_at, uuid, project_id, user_id, volume_provider,"
        " connection_info, host, auto_remove, contents)"
        " VALUES (%s, 'vol-uuid-1', 'p1', 'u1', 'local', NULL, 'node-1', 1, %s)",
        (CREATED, "x" * 70000),  # beyond TEXT's 64 KiB: the column must be MEDIUMTEXT
    ),
    (
        "INSERT INTO volume_mapping (created_at, uuid, project_id, user_id, container_uuid,"
        " container_path, volume_id) SELECT %s, 'vm-uuid-1', 'p1', 'u1', %s, '/data', id"
        " FROM volume WHERE uuid = 'vol-uuid-1'",
        (CREATED, MEMBER_UUID),
    ),
    (
        "INSERT INTO image (created_at, project_id, user_id, uuid, image_id, repo, tag, size,"
        " host) VALUES (%s, 'p1', 'u1', 'img-uuid-1', 'sha256:abc', 'nginx', '1.25', '1234',"
        " 'node-1')",
        (CREATED,),
    ),
    (
        "INSERT INTO quotas (created_at, project_id, resource, hard_limit)"
        " VALUES (%s, 'p1', 'containers', 10)",
        (CREATED,),
    ),
    (
        "INSERT INTO quota_usages (created_at, id, project_id, resource, in_use, reserved)"
        " VALUES (%s, 1, 'p1', 'containers', 3, 0)",
        (CREATED,),
    ),
]


def _build_zun_database(url: str) -> None:
    conn = connect_mariadb(url)
    try:
        with conn.cursor() as cur:
            # The dump lists tables by name, so container comes before the registry it refers to.
            cur.execute("SET FOREIGN_KEY_CHECKS = 0")
            for statement in create_statements(reference_dump_path().read_text()):
                cur.execute(statement)
            cur.execute("SET FOREIGN_KEY_CHECKS = 1")
            cur.execute("INSERT INTO alembic_version (version_num) VALUES ('3f2b36231bee')")
            for sql, params in ZUN_ROWS:
                cur.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


@pytest.fixture
def zun_db(mariadb_url: Callable[[], str]) -> Iterator[str]:
    url = mariadb_url()
    _build_zun_database(url)
    yield url
    db_engine.dispose()


def test_zun_database_is_at_our_base_revision(zun_db: str) -> None:
    assert migration.version(url=zun_db) == migration.BASE_REVISION


def test_upgrade_reaches_head_with_the_same_schema_as_a_fresh_database(
    zun_db: str, mariadb_url: Callable[[], str]
) -> None:
    migration.upgrade("head", url=zun_db)

    fresh = mariadb_url()
    migration.upgrade("head", url=fresh)
    assert migration.version(url=zun_db) == migration.head()
    assert schema_differences(live_tables(fresh), live_tables(zun_db)) == []


def test_rows_written_by_zun_read_back_through_the_models(zun_db: str) -> None:
    migration.upgrade("head", url=zun_db)
    db_engine.set_engine(db_engine.create_engine(zun_db))

    with db_engine.transaction(readonly=True) as session:
        capsule = session.scalars(
            sa.select(models.Container)
            .where(models.Container.uuid == CAPSULE_UUID)
            .options(selectinload(models.Container.members))
        ).one()
        member = capsule.members[0]
        bare = session.scalars(
            sa.select(models.Container).where(models.Container.uuid == PLAIN_UUID)
        ).one()
        service = session.scalars(sa.select(models.ZunService)).one()
        node = session.get(models.ComputeNode, "cn-uuid-1")
        registry = session.scalars(sa.select(models.Registry)).one()
        action = session.scalars(
            sa.select(models.ContainerAction).options(selectinload(models.ContainerAction.events))
        ).one()
        execs = session.scalars(sa.select(models.ExecInstance)).all()
        mapping = session.scalars(sa.select(models.VolumeMapping)).one()
        usage = session.scalars(sa.select(models.QuotaUsage)).one()
        image = session.scalars(sa.select(models.Image)).one()

    assert capsule.container_type == 1
    assert capsule.labels == {"app": "web"}
    assert capsule.annotations == {"k": "v"}
    assert capsule.addresses["net-1"][0]["addr"] == "10.0.0.5"
    assert capsule.restart_policy == {"Name": "always", "MaximumRetryCount": "0"}
    assert capsule.interactive is False and capsule.cpu == 0.5

    assert member.uuid == MEMBER_UUID and member.capsule_id == capsule.id
    assert member.command == ["nginx", "-g", "daemon off;"]
    assert member.entrypoint == ["/docker-entrypoint.sh"]
    assert member.environment == {"LANG": "C.UTF-8"}
    assert member.ports == [{"port": 80, "protocol": "tcp"}]
    assert member.security_groups == ["sg-1"]
    assert member.healthcheck["retries"] == 3
    assert member.exposed_ports == {"80/tcp": {}}
    assert member.cpuset == {"cpuset_cpus": "0-1", "cpuset_mems": "0"}
    assert member.interactive is True and member.tty is True
    assert member.started_at == CREATED and member.created_at == CREATED
    assert member.registry_id == registry.id and member.container_type == 0
    assert member.image_pull_policy == "ifnotpresent" and member.disk == 10

    assert bare.labels is None and bare.command is None and bare.container_type == 0

    assert (service.host, service.binary, service.report_count) == ("node-1", "zun-compute", 42)
    assert service.disabled is False and service.last_seen_up == CREATED

    assert node is not None and node.runtimes == ["runc"] and node.pci_stats == []
    assert node.numa_topology["nodes"][0]["cpuset"] == [0, 1, 2, 3]
    assert node.disk_quota_supported is False and node.enable_cpu_pinning is False

    assert registry.password == "gAAAAABk-fernet-token"
    assert [e.result for e in action.events] == ["Success"]
    assert [(e.exec_id, e.container_id) for e in execs] == [("exec-1", member.id)]
    assert mapping.volume.uuid == "vol-uuid-1" and len(mapping.volume.contents) == 70000
    assert (usage.id, usage.in_use) == (1, 3)
    assert (image.repo, image.tag, image.host) == ("nginx", "1.25", "node-1")


def test_models_write_to_an_upgraded_database(zun_db: str) -> None:
    migration.upgrade("head", url=zun_db)
    db_engine.set_engine(db_engine.create_engine(zun_db))
    by_uuid = sa.select(models.Container).where(models.Container.uuid == MEMBER_UUID)

    with db_engine.transaction() as session:
        member = session.scalars(by_uuid).one()
        member.environment["TZ"] = "UTC"  # in-place change: tracked by the JSON type
        member.labels = {"tier": "front"}
        member.status = "Stopped"
    with db_engine.transaction(readonly=True) as session:
        member = session.scalars(by_uuid).one()
    assert member.environment == {"LANG": "C.UTF-8", "TZ": "UTC"}
    assert member.labels == {"tier": "front"} and member.status == "Stopped"
    assert member.updated_at is not None and member.updated_at > CREATED

    # The volume mapping's foreign key (no cascade) still protects the container ...
    with pytest.raises(db_exc.DBReferenceError):
        with db_engine.transaction() as session:
            session.execute(sa.delete(models.Container).where(models.Container.id == member.id))
    # ... and once it is gone, Zun's ON DELETE CASCADE keys remove actions and exec rows.
    with db_engine.transaction() as session:
        session.execute(sa.delete(models.VolumeMapping))
        session.execute(sa.delete(models.Container).where(models.Container.id == member.id))

    with db_engine.transaction(readonly=True) as session:
        left = session.scalars(sa.select(models.Container.uuid)).all()
        actions = session.scalars(sa.select(models.ContainerAction)).all()
        events = session.scalars(sa.select(models.ContainerActionEvent)).all()
        execs = session.scalars(sa.select(models.ExecInstance)).all()
    assert sorted(left) == sorted([CAPSULE_UUID, PLAIN_UUID])
    assert actions == [] and events == [] and execs == []


def test_zun_json_texts_become_what_the_api_writes(zun_db: str) -> None:
    """Zun's ", " separators are rewritten (migration 8d2e6f1a4c57): the list puts stored
    texts into its answer undecoded, and that answer is the decoded view's, byte for byte."""
    migration.upgrade("head", url=zun_db)
    db_engine.set_engine(db_engine.create_engine(zun_db))
    names = [
        "command",
        "entrypoint",
        "environment",
        "labels",
        "annotations",
        "addresses",
        "ports",
        "security_groups",
        "healthcheck",
        "exposed_ports",
        "cpuset",
        "restart_policy",
    ]
    with db_engine.transaction(readonly=True) as session:
        stored = session.execute(
            sa.select(
                models.Container.uuid,
                *(sa.type_coerce(getattr(models.Container, n), sa.Text) for n in names),
            )
        ).all()
    texts = {row[0]: dict(zip(names, row[1:], strict=True)) for row in stored}
    assert texts[MEMBER_UUID]["command"] == '["nginx","-g","daemon off;"]'
    assert texts[MEMBER_UUID]["healthcheck"] == (
        '{"test":"curl localhost","interval":10,"retries":3,"timeout":5}'
    )
    assert texts[CAPSULE_UUID]["labels"] == '{"app":"web"}'
    assert texts[PLAIN_UUID]["labels"] is None
    for row in texts.values():
        for text in row.values():
            assert text is None or text == json.dumps(json.loads(text), separators=(",", ":"))

    init_config()
    with db_engine.transaction() as session:  # node-1 up: its rows go through the encoder
        now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
        session.execute(sa.update(models.ZunService).values(last_seen_up=now))
    context = RequestContext(user_id="u1", project_id="p1", roles=["admin"], is_admin=True)
    page = paging.Page(limit=10, marker=None, sort_key="id", sort_dir="asc", resource_url=None)
    with db_engine.transaction(readonly=True) as session:
        rows = container_q.list_for_view(session, context, all_projects=True, filters={}, page=page)
        decoded = [container_q.get_view_row(session, row[0]) for row in rows]
    assert {row[0] for row in rows} == {MEMBER_UUID, PLAIN_UUID}  # not the capsule
    items, _ = views.encode_page(context, rows)
    fmt = views.formatter(context)
    assert items == [json.dumps(fmt(row), separators=(",", ":")) for row in decoded]
