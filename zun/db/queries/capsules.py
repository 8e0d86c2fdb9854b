"""Capsule rows: a ``container`` row with ``container_type`` 1, and its members.

Members are ``container`` rows pointing to the capsule (``capsule_id`` = the capsule's ``id``)
with ``container_type`` 2 (containers) or 3 (init containers). A list page costs two queries
whatever its size: the capsules, then the members of all of them (no N+1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Row
from sqlalchemy.orm import Session

from zun.common import consts, exception
from zun.common.context import RequestContext
from zun.db import models, paging
from zun.db.queries import containers as container_q

C = models.Container

MEMBER_TYPES = (consts.TYPE_CAPSULE_CONTAINER, consts.TYPE_CAPSULE_INIT_CONTAINER)

#: Member rows come in the container view's row order (container_q.ROW_KEYS), then these.
MEMBER_EXTRA = ("capsule_id", "container_type")


def not_found(ident: str) -> exception.ContainerNotFound:
    # Zun answers a missing capsule with the container error (rest-api.md §8): clients match it.
    return exception.ContainerNotFound(container=ident)


def _capsules() -> sa.Select[Any]:
    return sa.select(C).where(C.container_type == consts.TYPE_CAPSULE)


def list_page(
    session: Session, context: RequestContext, *, all_projects: bool, page: paging.Page
) -> list[models.Container]:
    stmt = paging.project_scope(_capsules(), C, context, all_projects)
    return paging.paginate(session, stmt, C, page, not_found=not_found)


def get_by_ident(session: Session, context: RequestContext, ident: str) -> models.Container:
    """The capsule named or identified by ``ident`` that the caller may see (404/409)."""
    return paging.get_by_ident(
        session,
        C,
        ident,
        context=context,
        not_found=not_found,
        singular="container",
        plural="containers",
        stmt=_capsules(),
    )


def get_by_uuid(session: Session, uuid: str) -> models.Container | None:
    return session.scalars(_capsules().where(C.uuid == uuid)).first()


def _member_select() -> sa.Select[Any]:
    columns = [getattr(C, name) for name in container_q.VIEW_COLUMNS]
    return (
        sa.select(
            *columns,
            C.id,
            models.Registry.uuid.label("registry_uuid"),
            C.capsule_id,
            C.container_type,
        )
        .select_from(C)
        .outerjoin(models.Registry, models.Registry.id == C.registry_id)
        .where(C.container_type.in_(MEMBER_TYPES))
    )


def member_view_rows(session: Session, capsule_ids: Iterable[int]) -> dict[int, list[Row[Any]]]:
    """View rows of the members of these capsules, by capsule id, in creation order."""
    ids = list(capsule_ids)
    grouped: dict[int, list[Row[Any]]] = {i: [] for i in ids}
    if not ids:
        return grouped
    stmt = _member_select().where(C.capsule_id.in_(ids)).order_by(C.id)
    for row in session.connection().execute(stmt):
        grouped[row.capsule_id].append(row)
    return grouped


def members(session: Session, capsule_id: int) -> list[models.Container]:
    """The member rows of a capsule: init containers first, each kind in creation order."""
    stmt = (
        sa.select(C)
        .where(C.capsule_id == capsule_id, C.container_type.in_(MEMBER_TYPES))
        .order_by(sa.desc(C.container_type), C.id)
    )
    return list(session.scalars(stmt))


def insert(
    session: Session, capsule: Mapping[str, Any], member_values: Sequence[Mapping[str, Any]]
) -> models.Container:
    """The capsule row and its members, in the caller's transaction."""
    row = C(**capsule)
    session.add(row)
    session.flush()
    for values in member_values:
        session.add(C(**values, capsule_id=row.id))
    session.flush()
    return row


def update_all(session: Session, capsule_id: int, values: Mapping[str, Any]) -> None:
    """The same values on the capsule and every member (host, error state)."""
    session.execute(
        sa.update(C).where(sa.or_(C.id == capsule_id, C.capsule_id == capsule_id)).values(**values)
    )


def update_members(
    session: Session,
    capsule_id: int,
    values: Mapping[str, Any],
    *,
    statuses: Iterable[str] | None = None,
) -> None:
    stmt = sa.update(C).where(C.capsule_id == capsule_id)
    if statuses is not None:
        stmt = stmt.where(C.status.in_(list(statuses)))
    session.execute(stmt.values(**values))


def update_member(session: Session, uuid: str, values: Mapping[str, Any]) -> None:
    session.execute(sa.update(C).where(C.uuid == uuid).values(**values))


def set_task(session: Session, uuid: str, values: Mapping[str, Any]) -> int:
    """Unconditional update of the capsule row (delete claims it whatever runs: no state
    check, as in Zun)."""
    return session.execute(
        sa.update(C).where(C.uuid == uuid, C.container_type == consts.TYPE_CAPSULE).values(**values)
    ).rowcount


def member_resources(session: Session, capsule_id: int) -> tuple[float, int]:
    """(cpu, memory MiB) the members hold on their host: what the node's usage counts."""
    rows = session.execute(sa.select(C.cpu, C.memory).where(C.capsule_id == capsule_id))
    cpu, memory = 0.0, 0
    for row_cpu, row_memory in rows:
        cpu += float(row_cpu or 0)
        try:
            memory += int(row_memory or 0)
        except ValueError:
            continue
    return cpu, memory


def destroy(session: Session, capsule: models.Container | Any) -> None:
    """The capsule's volume records, its members and itself (actions go by cascade)."""
    mapping = models.VolumeMapping
    uuids = [capsule.uuid, *session.scalars(sa.select(C.uuid).where(C.capsule_id == capsule.id))]
    volume_ids = list(
        session.scalars(sa.select(mapping.volume_id).where(mapping.container_uuid.in_(uuids)))
    )
    session.execute(sa.delete(mapping).where(mapping.container_uuid.in_(uuids)))
    if volume_ids:
        session.execute(sa.delete(models.Volume).where(models.Volume.id.in_(volume_ids)))
    session.execute(sa.delete(C).where(C.capsule_id == capsule.id))
    session.execute(sa.delete(C).where(C.id == capsule.id))


def host_capsules(session: Session, host: str) -> list[models.Container]:
    """Capsule rows of ``host`` (start-up recovery)."""
    return list(session.scalars(_capsules().where(C.host == host)))
