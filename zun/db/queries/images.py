"""Statements on ``image``: one row per (repo, tag, host), written by the API and the node."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_utils import uuidutils
from sqlalchemy.orm import Session

from zun.common import exception
from zun.common.context import RequestContext
from zun.db import models, paging

I = models.Image  # noqa: E741


def not_found(ident: str) -> exception.ImageNotFound:
    return exception.ImageNotFound(image=ident)


def list_page(session: Session, context: RequestContext, page: paging.Page) -> list[models.Image]:
    """The caller's project's images (admins included: Zun has no all_projects here)."""
    stmt = paging.project_scope(sa.select(I), I, context)
    return paging.paginate(session, stmt, I, page, not_found=not_found)


def get(session: Session, context: RequestContext, ident: str) -> models.Image:
    """By UUID; the caller's project only, except for admins. Not found (or not a UUID): the
    400 ``image-not-found`` of Zun (where a non-UUID ident was a 500)."""
    if not uuidutils.is_uuid_like(ident):
        raise not_found(ident)
    stmt = sa.select(I).where(I.uuid == ident)
    if not (context.is_admin or context.all_projects):
        stmt = stmt.where(I.project_id == context.project_id)
    row = session.scalars(stmt).first()
    if row is None:
        raise not_found(ident)
    return row


def get_by_uuid(session: Session, image_uuid: str) -> models.Image | None:
    return session.scalars(sa.select(I).where(I.uuid == image_uuid)).first()


def create(session: Session, values: Mapping[str, Any]) -> models.Image:
    row = I(**values)
    if not row.uuid:
        row.uuid = uuidutils.generate_uuid()
    session.add(row)
    try:
        session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.ImageAlreadyExists(tag=row.tag, repo=row.repo) from None
    return row


def update(session: Session, image_uuid: str, values: Mapping[str, Any]) -> int:
    return session.execute(sa.update(I).where(I.uuid == image_uuid).values(**values)).rowcount


def delete(session: Session, image_uuid: str) -> int:
    return session.execute(sa.delete(I).where(I.uuid == image_uuid)).rowcount
