"""Pages and lookups of the REST collections, as the queries of every resource apply them.

* :class:`Page` and :func:`paginate`: ``limit``/``marker``/``sort_key``/``sort_dir`` over a
  ``select(model)`` (rest-api.md §4.7); the request's parameters are read by
  ``zun.api.common.page_params``;
* :func:`project_scope` and :func:`get_by_ident`: a UUID-or-name lookup scoped to the caller's
  project (admins reach every project), with the 409 for an ambiguous name (§4.1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa
from oslo_db.sqlalchemy import utils as db_utils
from oslo_utils import uuidutils
from sqlalchemy.orm import Session

from zun.common import exception
from zun.common.context import RequestContext

T = TypeVar("T")


@dataclass(frozen=True)
class Page:
    """A validated page request."""

    limit: int
    marker: str | None
    sort_key: str
    sort_dir: str
    resource_url: str | None = None


def _column_keys(model: type) -> set[str]:
    return {attr.key for attr in sa.inspect(model).mapper.column_attrs}


def check_sort_key(model: type, sort_key: str) -> None:
    """400 ``container.invalid-parameter-value`` unless ``sort_key`` is a column of ``model``."""
    if sort_key not in _column_keys(model):
        raise exception.InvalidParameterValue(
            err=f'The sort_key value "{sort_key}" is an invalid field for sorting'
        )


def paginate(
    session: Session,
    stmt: sa.Select[Any],
    model: type[T],
    page: Page,
    *,
    not_found: Callable[[str], Exception],
    marker_attr: str = "uuid",
    tiebreak: str = "id",
) -> list[T]:
    """One page of ``stmt`` (a ``select(model)`` with the caller's filters and scoping).

    The marker is looked up through ``stmt`` itself, so a marker the caller may not see is a
    404 (``not_found(marker)``), exactly like an unknown one. ``tiebreak`` (a unique column) is
    appended to the sort keys so that pages never overlap.
    """
    marker_row = None
    if page.marker is not None:
        marker_row = session.scalars(
            stmt.where(getattr(model, marker_attr) == page.marker).limit(1)
        ).first()
        if marker_row is None:
            raise not_found(page.marker)
    check_sort_key(model, page.sort_key)
    keys = [page.sort_key] if page.sort_key == tiebreak else [page.sort_key, tiebreak]
    paged = db_utils.paginate_query(
        stmt, model, page.limit, keys, marker=marker_row, sort_dir=page.sort_dir
    )
    return list(session.scalars(paged))


def project_scope(
    stmt: sa.Select[Any], model: type, context: RequestContext, all_projects: bool = False
) -> sa.Select[Any]:
    """Restrict ``stmt`` to the caller's project unless ``all_projects`` (lists: admins too)."""
    if all_projects:
        return stmt
    return stmt.where(model.project_id == context.project_id)  # type: ignore[attr-defined]


def get_by_ident(
    session: Session,
    model: type[T],
    ident: str,
    *,
    context: RequestContext,
    not_found: Callable[[str], Exception],
    singular: str,
    plural: str,
    name_attr: str = "name",
    uuid_attr: str = "uuid",
    project_scoped: bool = True,
    all_projects: bool | None = None,
    stmt: sa.Select[Any] | None = None,
) -> T:
    """The row whose UUID (when ``ident`` looks like one) or name is ``ident``.

    Scoped to the caller's project when ``project_scoped``, except for admins (or when
    ``all_projects`` says so): another project's row is a 404, never a 403. A name matching
    several visible rows is a 409 ``container.conflict`` "Multiple <plural> exist with same
    name. Please use the <singular> uuid instead."
    """
    if stmt is None:
        stmt = sa.select(model)
    if project_scoped:
        wide = context.is_admin or context.all_projects if all_projects is None else all_projects
        stmt = project_scope(stmt, model, context, wide)
    if uuidutils.is_uuid_like(ident):
        stmt = stmt.where(getattr(model, uuid_attr) == ident)
    else:
        stmt = stmt.where(getattr(model, name_attr) == ident)
    rows = list(session.scalars(stmt.limit(2)))
    if not rows:
        raise not_found(ident)
    if len(rows) > 1:
        raise exception.Conflict(
            message=f"Multiple {plural} exist with same name. Please use "
            f"the {singular} uuid instead."
        )
    return rows[0]
