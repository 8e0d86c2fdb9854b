"""zun.compute.quota on a migrated SQLite database: limits, fallbacks, usage, enforcement."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from zun.common import exception
from zun.compute import quota
from zun.conf import CONF
from zun.db import engine as db_engine
from zun.db import migration, models
from zun.db.queries import quotas as quota_q


@pytest.fixture
def db(tmp_path: Path) -> Iterator[None]:
    url = f"sqlite:///{tmp_path / 'zun.sqlite'}"
    migration.upgrade(url=url)
    db_engine.set_engine(db_engine.create_engine(url))
    yield
    db_engine.dispose()


def _container(
    project: str,
    cpu: float = 1.0,
    memory: str | None = "256",
    disk: int = 0,
    container_type: int | None = 0,
) -> None:
    with db_engine.transaction() as session:
        session.add(
            models.Container(
                uuid=str(uuid.uuid4()),
                project_id=project,
                cpu=cpu,
                memory=memory,
                disk=disk,
                container_type=container_type,
            )
        )


def test_limits_fall_back_from_project_to_default_class_to_config(db: None) -> None:
    with db_engine.transaction() as session:
        assert quota.get_project_limits(session, "p1") == {
            "containers": 40,
            "memory": 51200,
            "cpu": 20,
            "disk": 100,
        }
        quota.set_class_limits(session, "default", {"containers": 7, "cpu": "9"})
    with db_engine.transaction() as session:
        assert quota.get_defaults(session) == {
            "containers": 7,
            "memory": 51200,
            "cpu": 9,
            "disk": 100,
        }
        quota.set_project_limits(session, "p1", {"containers": 3})
    with db_engine.transaction() as session:
        assert quota.get_project_limits(session, "p1") == {
            "containers": 3,
            "memory": 51200,
            "cpu": 9,
            "disk": 100,
        }
        assert quota.get_project_limits(session, "p2")["containers"] == 7
        # An unknown class reads the [quota] options, not the default class.
        assert quota.get_class_limits(session, "gold") == quota.config_defaults()


def test_config_options_are_the_last_fallback(db: None) -> None:
    CONF.set_override("containers", 2, group="quota")
    try:
        with db_engine.transaction() as session:
            assert quota.get_project_limits(session, "p1")["containers"] == 2
    finally:
        CONF.clear_override("containers", group="quota")


def test_upsert_updates_in_place_and_delete_resets(db: None) -> None:
    with db_engine.transaction() as session:
        quota.set_project_limits(session, "p1", {"containers": 3, "disk": 5})
    with db_engine.transaction() as session:
        quota.set_project_limits(session, "p1", {"containers": -1})
    with db_engine.transaction() as session:
        rows = session.execute(
            sa.select(quota_q.Q.c.resource, quota_q.Q.c.hard_limit).where(
                quota_q.Q.c.project_id == "p1"
            )
        ).all()
        assert sorted(rows) == [("containers", -1), ("disk", 5)]
        quota.delete_project_limits(session, "p1")
    with db_engine.transaction() as session:
        assert quota.get_project_limits(session, "p1")["disk"] == 100


def test_newest_row_wins_when_an_old_tool_left_duplicates(db: None) -> None:
    with db_engine.transaction() as session:
        session.add_all(
            [
                models.Quota(project_id="p1", resource="cpu", hard_limit=1),
                models.Quota(project_id="p1", resource="cpu", hard_limit=6),
            ]
        )
    with db_engine.transaction() as session:
        assert quota.get_project_limits(session, "p1")["cpu"] == 6


def test_bad_values_are_refused(db: None) -> None:
    with db_engine.transaction() as session, pytest.raises(exception.InvalidQuotaValue):
        quota.set_project_limits(session, "p1", {"containers": -2})
    with db_engine.transaction() as session, pytest.raises(exception.InvalidQuotaValue):
        quota.set_class_limits(session, "default", {"gpus": 1})


def test_usage_counts_plain_containers_of_the_project_only(db: None) -> None:
    _container("p1", cpu=0.5, memory="512", disk=2)
    _container("p1", cpu=0.25, memory="128M", disk=1)
    _container("p1", cpu=0.1115, memory=None, disk=0, container_type=None)
    _container("p1", cpu=4, memory="1024", container_type=1)  # a capsule
    _container("p1", cpu=4, memory="1024", container_type=2)  # a capsule member
    _container("p2", cpu=3, memory="64")
    with db_engine.transaction() as session:
        usages = quota.get_project_usages(session, "p1")
    assert usages["containers"] == {"limit": 40, "in_use": 3}
    assert usages["cpu"] == {"limit": 20, "in_use": 0.862}
    assert usages["memory"] == {"limit": 51200, "in_use": 640}
    assert usages["disk"] == {"limit": 100, "in_use": 3}


def test_enforce_raises_over_quota_with_zuns_message(db: None) -> None:
    with db_engine.transaction() as session:
        quota.set_project_limits(session, "p1", {"containers": 1, "cpu": 2, "memory": 100})
    _container("p1", cpu=1.5, memory="64")
    with db_engine.transaction() as session, pytest.raises(exception.OverQuota) as info:
        quota.enforce_in_transaction(
            session, None, "p1", {"containers": 1, "cpu": 1, "memory": 16, "disk": 0}
        )
    assert info.value.code == 403
    assert str(info.value) == "Quota exceeded for resources: ['containers', 'cpu']"
    # Another project is not affected; growing nothing is never refused.
    with db_engine.transaction() as session:
        quota.enforce_in_transaction(session, None, "p2", {"containers": 1, "cpu": 1})
        quota.enforce_in_transaction(session, None, "p1", {"containers": 0, "cpu": -1})


def test_unlimited_and_noop_driver(db: None) -> None:
    with db_engine.transaction() as session:
        quota.set_project_limits(session, "p1", {"containers": -1, "cpu": 0})
    _container("p1")
    with db_engine.transaction() as session:
        quota.enforce_in_transaction(session, None, "p1", {"containers": 5})
        with pytest.raises(exception.OverQuota):
            quota.enforce_in_transaction(session, None, "p1", {"cpu": 0.1})
    CONF.set_override("driver", quota.NOOP_DRIVER, group="quota")
    try:
        with db_engine.transaction() as session:
            quota.enforce_in_transaction(session, None, "p1", {"cpu": 100})
            assert quota.get_project_limits(session, "p1") == dict.fromkeys(quota.RESOURCES, -1)
            assert quota.get_project_usages(session, "p1")["cpu"] == {"limit": -1, "in_use": -1}
    finally:
        CONF.clear_override("driver", group="quota")


def test_one_lock_row_per_project(db: None) -> None:
    for project in ("p1", "p1", "p2"):
        with db_engine.transaction() as session:
            quota.enforce_in_transaction(session, None, project, {"containers": 1})
    with db_engine.transaction() as session:
        rows = session.execute(sa.select(quota_q.QU.c.id, quota_q.QU.c.project_id)).all()
    assert sorted(p for _, p in rows) == ["p1", "p2"]
    assert len({i for i, _ in rows}) == 2
