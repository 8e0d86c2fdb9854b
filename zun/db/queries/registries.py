"""Statements on ``registry``: list, lookup, create, update, delete.

``password`` holds the Fernet token (:mod:`zun.common.crypt`); callers pass and get clear text
only through :func:`create` / :func:`update` / :func:`decrypted_password`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_utils import uuidutils
from sqlalchemy.orm import Session

from zun.common import crypt, exception
from zun.common.context import RequestContext
from zun.db import models, paging

R = models.Registry
FILTERS = ("name", "domain", "username", "project_id", "user_id")


def not_found(ident: str) -> exception.RegistryNotFound:
    return exception.RegistryNotFound(registry=ident)


def list_page(
    session: Session,
    context: RequestContext,
    page: paging.Page,
    filters: Mapping[str, Any],
    all_projects: bool,
) -> list[models.Registry]:
    stmt = paging.project_scope(sa.select(R), R, context, all_projects)
    for name, value in filters.items():
        stmt = stmt.where(getattr(R, name) == value)
    return paging.paginate(session, stmt, R, page, not_found=not_found)


def get_by_ident(session: Session, context: RequestContext, ident: str) -> models.Registry:
    """By UUID or name, in the caller's project (admins: every project); 404 / 409."""
    return paging.get_by_ident(
        session,
        R,
        ident,
        context=context,
        not_found=not_found,
        singular="registry",
        plural="registries",
    )


def _encrypted(values: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(values)
    if out.get("password") is not None:
        out["password"] = crypt.encrypt(str(out["password"]))
    return out


def create(session: Session, values: Mapping[str, Any]) -> models.Registry:
    row = R(**_encrypted(values))
    if not row.uuid:
        row.uuid = uuidutils.generate_uuid()
    session.add(row)
    try:
        session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.RegistryAlreadyExists(field="uuid", value=row.uuid) from None
    return row


def update(session: Session, uuid: str, values: Mapping[str, Any]) -> models.Registry:
    row = session.scalars(sa.select(R).where(R.uuid == uuid)).one_or_none()
    if row is None:
        raise not_found(uuid)
    for name, value in _encrypted(values).items():
        setattr(row, name, value)
    session.flush()
    return row


def delete(session: Session, uuid: str) -> None:
    """Remove a registry; 409 while containers still refer to it."""
    row_id = session.scalar(sa.select(R.id).where(R.uuid == uuid))
    if row_id is None:
        raise not_found(uuid)
    if in_use(session, row_id):
        raise exception.Conflict(
            message=f"Registry {uuid} is used by containers and cannot be deleted."
        )
    try:
        deleted = session.execute(sa.delete(R).where(R.uuid == uuid)).rowcount
        session.flush()
    except db_exc.DBReferenceError:
        raise exception.Conflict(
            message=f"Registry {uuid} is used by containers and cannot be deleted."
        ) from None
    if not deleted:
        raise not_found(uuid)


def in_use(session: Session, registry_id: int) -> bool:
    return (
        session.scalar(
            sa.select(sa.func.count())
            .select_from(models.Container)
            .where(models.Container.registry_id == registry_id)
        )
        > 0
    )


def decrypted_password(row: models.Registry) -> str | None:
    """The clear password of a registry row (for the node's pulls); never log it."""
    return crypt.decrypt(row.password) if row.password else None


def find_for_domain(
    session: Session, project_id: str | None, domain: str
) -> models.Registry | None:
    """The project's newest registry for ``domain`` (credentials for a pull from it)."""
    stmt = (
        sa.select(R)
        .where(R.domain == domain, R.project_id == project_id)
        .order_by(R.id.desc())
        .limit(1)
    )
    return session.scalars(stmt).first()


def reencrypt_passwords(
    session: Session, old_keys: list[str], new_key: str | None = None
) -> tuple[int, list[str]]:
    """Rewrite every registry password under ``new_key`` (default: the configured key).

    Tokens that ``old_keys`` or Zun's public default key open are re-encrypted; those already
    under the new key are left as they are. Returns (rows changed, uuids of rows no key opens);
    the unreadable rows are left unchanged.
    """
    changed, unreadable = 0, []
    for row in session.scalars(sa.select(R).where(R.password.is_not(None))):
        try:
            token = crypt.reencrypt(row.password, old_keys, new_key)
        except exception.InvalidEncryptionKey:
            unreadable.append(row.uuid)
            continue
        if token is not None:
            row.password = token
            changed += 1
    session.flush()
    return changed, unreadable
