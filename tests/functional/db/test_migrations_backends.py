"""Migrations run to head (and back) on SQLite, MariaDB and PostgreSQL; models round-trip there."""

from __future__ import annotations

import datetime

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from oslo_db import exception as db_exc
from sqlalchemy.engine import Engine
from sqlalchemy.orm import selectinload

from zun.db import engine as db_engine
from zun.db import migration, models

# An empty database: the tests run the migrations themselves.
BACKEND_REVISION = None


def _model_differences(engine: Engine) -> list[object]:
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        diffs = compare_metadata(ctx, models.Base.metadata)
    # PostgreSQL gets its own name for volume_mapping's uuid key (see the base revision).
    return [
        d
        for d in diffs
        if not (
            engine.dialect.name == "postgresql"
            and isinstance(d, tuple)
            and d[0] in ("add_constraint", "remove_constraint")
            and d[1].name in ("uniq_volume0uuid", models.VOLUME_MAPPING_UUID_KEY_PG)
            and d[1].table.name == "volume_mapping"
        )
    ]


def test_upgrade_to_head_matches_the_models(backend: Engine) -> None:
    engine = backend
    assert migration.version(engine=engine) is None

    migration.upgrade("head", engine=engine)

    assert migration.version(engine=engine) == migration.head()
    assert set(migration.table_names(engine=engine)) == set(models.Base.metadata.tables) | {
        "alembic_version"
    }
    assert _model_differences(engine) == []


def test_downgrade_to_base_and_up_again(backend: Engine) -> None:
    engine = backend
    migration.upgrade("head", engine=engine)

    migration.downgrade(migration.BASE_REVISION, engine=engine)
    assert migration.version(engine=engine) == migration.BASE_REVISION
    indexes = {i["name"] for i in sa.inspect(engine).get_indexes("container")}
    assert "ix_container_host" not in indexes

    migration.downgrade("base", engine=engine)
    assert migration.table_names(engine=engine) == ["alembic_version"]

    migration.upgrade("head", engine=engine)
    assert _model_differences(engine) == []


def test_container_round_trip(backend: Engine) -> None:
    engine = backend
    migration.upgrade("head", engine=engine)
    started = datetime.datetime(2024, 1, 2, 3, 4, 5)

    with db_engine.transaction() as session:
        registry = models.Registry(uuid="reg-1", domain="r.example", username="bob")
        capsule = models.Container(uuid="cap-1", container_type=1, host="node-1")
        session.add_all([registry, capsule])
        session.flush()
        session.add(
            models.Container(
                uuid="ctr-1",
                project_id="p1",
                name="web",
                command=["sh", "-c", "echo héllo"],
                environment={"A": "1"},
                labels={"k": "v"},
                ports=[{"port": 80, "protocol": "tcp"}],
                addresses={"net": [{"addr": "10.0.0.2", "version": 4}]},
                restart_policy={"Name": "on-failure", "MaximumRetryCount": "3"},
                security_groups=["default"],
                healthcheck={"test": "true", "interval": 5},
                exposed_ports={"80/tcp": {}},
                cpuset={"cpuset_cpus": "0"},
                annotations={"a": "x" * 70_000},  # more than TEXT holds on MariaDB
                cni_metadata={"ip": "10.0.0.2"},
                entrypoint=["/init"],
                cpu=1.5,
                memory="512",
                disk=10,
                interactive=True,
                tty=False,
                privileged=False,
                auto_remove=True,
                auto_heal=False,
                started_at=started,
                host="node-1",
                capsule_id=capsule.id,
                registry_id=registry.id,
            )
        )
        session.add(models.ExecInstance(container_id=capsule.id, exec_id="e1"))

    with db_engine.transaction(readonly=True) as session:
        ctr = session.scalars(
            sa.select(models.Container)
            .where(models.Container.uuid == "ctr-1")
            .options(selectinload(models.Container.image_registry))
        ).one()

    assert ctr.command == ["sh", "-c", "echo héllo"]
    assert ctr.environment == {"A": "1"} and ctr.labels == {"k": "v"}
    assert ctr.ports == [{"port": 80, "protocol": "tcp"}]
    assert ctr.addresses == {"net": [{"addr": "10.0.0.2", "version": 4}]}
    assert ctr.annotations is not None and len(ctr.annotations["a"]) == 70_000
    assert ctr.security_groups == ["default"] and ctr.entrypoint == ["/init"]
    assert (ctr.cpu, ctr.memory, ctr.disk) == (1.5, "512", 10)
    assert (ctr.interactive, ctr.tty, ctr.auto_remove) == (True, False, True)
    assert ctr.started_at == started and ctr.started_at.tzinfo is None
    assert ctr.created_at is not None and ctr.created_at.tzinfo is None
    assert ctr.container_type == 0  # the column's server default
    assert ctr.image_registry is not None and ctr.image_registry.username == "bob"

    # Constraints are enforced on every backend, SQLite included (foreign keys on).
    with pytest.raises(db_exc.DBDuplicateEntry):
        with db_engine.transaction() as session:
            session.add(models.Container(uuid="ctr-1"))
    with pytest.raises(db_exc.DBReferenceError):
        with db_engine.transaction() as session:
            session.add(models.ExecInstance(container_id=999_999, exec_id="x"))

    # Deleting the capsule cascades to its members and their exec instances.
    with db_engine.transaction() as session:
        session.execute(sa.delete(models.Container).where(models.Container.uuid == "cap-1"))
    with db_engine.transaction(readonly=True) as session:
        assert session.scalars(sa.select(models.Container)).all() == []
        assert session.scalars(sa.select(models.ExecInstance)).all() == []
