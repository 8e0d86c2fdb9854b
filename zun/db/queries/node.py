"""Queries of a compute node: its own rows only, through the ``host`` index, and CAS writes.

Every read here is scoped by ``container.host`` (index ``ix_container_host``) or by UUID, so a
node's periodic work costs the same whatever the other nodes hold. Status writes are single
conditional UPDATEs: a node finishing a task only writes if the row still carries the task it
started from (``task_state``), so a concurrent forced delete or a newer request wins.
"""

from __future__ import annotations

import datetime
import uuid as uuidlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Row
from sqlalchemy.orm import Session

from zun.common import consts
from zun.db import models
from zun.db.queries import containers

C = models.Container
N = models.ComputeNode

#: Columns the periodic sync and the recovery read for each row of the host.
SYNC_COLUMNS: tuple[str, ...] = (
    "id",
    "uuid",
    "status",
    "status_reason",
    "status_detail",
    "task_state",
    "auto_remove",
    "auto_heal",
    "container_id",
    "project_id",
    "image",
    "image_driver",
)

# Rows that hold resources on their host: everything but a capsule's own row.
_CLAIMING_TYPES = (
    consts.TYPE_CONTAINER,
    consts.TYPE_CAPSULE_CONTAINER,
    consts.TYPE_CAPSULE_INIT_CONTAINER,
)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


# --- containers -----------------------------------------------------------------------------


def get_container(session: Session, uuid: str) -> models.Container | None:
    return session.scalars(sa.select(C).where(C.uuid == uuid)).first()


def host_rows(session: Session, host: str, columns: Sequence[str] = SYNC_COLUMNS) -> list[Row[Any]]:
    """The given columns of every container row of ``host`` (one indexed query)."""
    return list(
        session.execute(sa.select(*[getattr(C, name) for name in columns]).where(C.host == host))
    )


def existing_uuids(session: Session, uuids: Iterable[str], host: str | None = None) -> set[str]:
    """Which of ``uuids`` have a container row (on ``host`` when given, else on any host)."""
    wanted = list(uuids)
    if not wanted:
        return set()
    stmt = sa.select(C.uuid).where(C.uuid.in_(wanted))
    if host is not None:
        stmt = stmt.where(C.host == host)
    return set(session.scalars(stmt))


def destroy_with_volume_records(session: Session, uuid: str) -> bool:
    """The row, its volume mappings and the volume rows only it used (API-side deletes)."""
    delete_volume_records(session, uuid)
    return containers.destroy(session, uuid)


# --- container actions ---------------------------------------------------------------------------


def record_event(
    session: Session,
    container_uuid: str,
    request_id: str,
    event: str,
    start_time: datetime.datetime,
    result: str,
    traceback: str | None = None,
) -> None:
    """A whole event (started and finished) of the request's action, and the action
    finished with it: two statements, nothing read back (the create's fast path)."""
    A, E = models.ContainerAction, models.ContainerActionEvent
    now = _now()
    mine = sa.and_(A.container_uuid == container_uuid, A.request_id == request_id)
    newest = sa.select(sa.func.max(A.id)).where(mine).scalar_subquery()
    session.execute(
        sa.insert(E).from_select(
            [
                "event",
                "action_id",
                "start_time",
                "finish_time",
                "result",
                "traceback",
                "created_at",
            ],
            sa.select(
                sa.literal(event),
                A.id,
                sa.literal(start_time),
                sa.literal(now),
                sa.literal(result),
                sa.literal(traceback, sa.Text),
                sa.literal(now),
            ).where(A.id == newest),
        )
    )
    values: dict[str, Any] = {"finish_time": now}
    if result == "Error":
        values["message"] = "Error"
    session.execute(sa.update(A).where(mine).values(**values))


# --- compute node -----------------------------------------------------------------------------


def upsert_compute_node(session: Session, hostname: str, values: Mapping[str, Any]) -> str:
    """Create or update the node's row (capacity and facts only); returns its UUID.

    The ``*_used`` columns are left to :func:`recompute_usage`: claims of the API update them
    concurrently, and only a single UPDATE computed from the rows can set them safely.
    """
    node_uuid = session.scalars(sa.select(N.uuid).where(N.hostname == hostname)).first()
    if node_uuid is None:
        node_uuid = str(uuidlib.uuid4())
        session.add(N(uuid=node_uuid, rp_uuid=node_uuid, hostname=hostname, **values))
        session.flush()
    else:
        session.execute(sa.update(N).where(N.uuid == node_uuid).values(**values))
    return node_uuid


def recompute_usage(session: Session, hostname: str) -> None:
    """``cpu_used``/``mem_used``/``disk_used`` of the node = the sums over its rows.

    One UPDATE with correlated sub-selects, so it cannot interleave with a claim made in
    another transaction halfway. Memory is stored as a string of MiB: cast in SQL.
    """
    mine = sa.and_(C.host == hostname, C.container_type.in_(_CLAIMING_TYPES))
    cpu = sa.select(sa.func.coalesce(sa.func.sum(C.cpu), 0.0)).where(mine).scalar_subquery()
    mem = (
        sa.select(sa.func.coalesce(sa.func.sum(sa.cast(C.memory, sa.Integer)), 0))
        .where(mine)
        .scalar_subquery()
    )
    disk = sa.select(sa.func.coalesce(sa.func.sum(C.disk), 0)).where(mine).scalar_subquery()
    session.execute(
        sa.update(N)
        .where(N.hostname == hostname)
        .values(cpu_used=cpu, mem_used=mem, disk_used=disk)
    )


# --- registry, images ---------------------------------------------------------------------------


def get_registry(session: Session, registry_id: int) -> models.Registry | None:
    return session.get(models.Registry, registry_id)


def record_image(
    session: Session,
    *,
    repo: str,
    tag: str | None,
    host: str,
    image_id: str,
    size: Any,
    project_id: str | None,
    user_id: str | None,
) -> None:
    """The ``image`` row of (repo, tag, host): created on first pull, refreshed after."""
    image = models.Image
    values = {"image_id": image_id, "size": None if size is None else str(size)}
    changed = session.execute(
        sa.update(image)
        .where(image.repo == repo, image.tag == tag, image.host == host)
        .values(**values)
    ).rowcount
    if not changed:
        session.add(
            image(
                uuid=str(uuidlib.uuid4()),
                repo=repo,
                tag=tag,
                host=host,
                project_id=project_id,
                user_id=user_id,
                **values,
            )
        )
        session.flush()


def update_image_by_uuid(session: Session, image_uuid: str, values: Mapping[str, Any]) -> int:
    return session.execute(
        sa.update(models.Image).where(models.Image.uuid == image_uuid).values(**values)
    ).rowcount


def delete_image_by_uuid(session: Session, image_uuid: str) -> None:
    session.execute(sa.delete(models.Image).where(models.Image.uuid == image_uuid))


# --- volumes ----------------------------------------------------------------------------------


def save_volume_records(session: Session, records: Iterable[Mapping[str, Any]]) -> None:
    """Store :func:`zun.volume.local.prepare_mounts` records as volume + mapping rows."""
    for record in records:
        volume = models.Volume(**record["volume"])
        session.add(volume)
        session.flush()
        session.add(models.VolumeMapping(volume_id=volume.id, **record["volume_mapping"]))
    session.flush()


def volume_records(session: Session, container_uuid: str) -> list[dict[str, Any]]:
    """``[{"volume": {...}, "volume_mapping": {...}}]`` of a container (one joined query)."""
    stmt = (
        sa.select(models.Volume, models.VolumeMapping)
        .join(models.VolumeMapping, models.VolumeMapping.volume_id == models.Volume.id)
        .where(models.VolumeMapping.container_uuid == container_uuid)
        .order_by(models.VolumeMapping.id)
    )
    return [
        {"volume": vol.as_dict(), "volume_mapping": mapping.as_dict()}
        for vol, mapping in session.execute(stmt)
    ]


def delete_volume_records(session: Session, container_uuid: str, host: str | None = None) -> None:
    """The volume records of a container; with ``host``, only its volumes on that host."""
    found = sa.select(models.VolumeMapping.volume_id).where(
        models.VolumeMapping.container_uuid == container_uuid
    )
    if host is not None:
        found = found.join(models.Volume, models.Volume.id == models.VolumeMapping.volume_id).where(
            models.Volume.host == host
        )
    ids = list(session.scalars(found))
    if host is not None and not ids:
        return
    mappings = sa.delete(models.VolumeMapping).where(
        models.VolumeMapping.container_uuid == container_uuid
    )
    if host is not None:
        mappings = mappings.where(models.VolumeMapping.volume_id.in_(ids))
    session.execute(mappings)
    if ids:
        session.execute(sa.delete(models.Volume).where(models.Volume.id.in_(ids)))


# --- time ---------------------------------------------------------------------------------------


def now() -> datetime.datetime:
    """Naive UTC, as every datetime column of the schema."""
    return _now()
