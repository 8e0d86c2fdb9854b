"""Container rows as the API needs them: one query per list, scoped lookups, atomic updates.

Lists select plain columns (no ORM identity map, no per-row objects) and join the registry for
its UUID in the same statement, so a page of 1000 rows costs one round trip and no N+1.
Writes that race with other requests are single conditional UPDATEs (compare-and-swap on
``task_state``); the caller reads the row count to learn whether it won.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from oslo_db.sqlalchemy import utils as db_utils
from oslo_utils import uuidutils
from sqlalchemy.engine import Row
from sqlalchemy.orm import Session

from zun.common import consts, exception
from zun.common.context import RequestContext
from zun.db import engine, models, paging, types
from zun.db.direct_select import DirectSelect
from zun.db.queries import compute_nodes, host_health

C = models.Container

#: Columns the container view reads; ``registry_uuid`` comes from the joined registry row.
#: Their order is the answer's: ``zun.api.views.containers.VIEW_KEYS`` is this list with
#: ``registry_id`` after ``healthcheck``.
VIEW_COLUMNS: tuple[str, ...] = (
    "uuid",
    "name",
    "image",
    "project_id",
    "user_id",
    "command",
    "entrypoint",
    "status",
    "status_reason",
    "status_detail",
    "task_state",
    "cpu",
    "memory",
    "disk",
    "cpu_policy",
    "environment",
    "labels",
    "workdir",
    "hostname",
    "ports",
    "addresses",
    "restart_policy",
    "interactive",
    "tty",
    "auto_remove",
    "auto_heal",
    "image_driver",
    "security_groups",
    "healthcheck",
    "created_at",
    "updated_at",
    "host",
    "image_pull_policy",
    "privileged",
    "runtime",
)

#: Exact-match filters of ``GET /v1/containers``.
LIST_FILTERS: tuple[str, ...] = (
    "name",
    "image",
    "project_id",
    "user_id",
    "memory",
    "host",
    "task_state",
    "status",
    "auto_remove",
)

#: Order of the values in a row returned by :func:`list_for_view` and :func:`get_view_row`.
ROW_KEYS: tuple[str, ...] = (*VIEW_COLUMNS, "id", "registry_uuid")
ROW_INDEX: dict[str, int] = {key: i for i, key in enumerate(ROW_KEYS)}

_VIEW_SELECT = [getattr(C, name) for name in VIEW_COLUMNS] + [
    C.id,
    models.Registry.uuid.label("registry_uuid"),
]


def _view_select() -> sa.Select[Any]:
    return (
        sa.select(*_VIEW_SELECT)
        .select_from(C)
        .outerjoin(models.Registry, models.Registry.id == C.registry_id)
        .where(C.container_type == consts.TYPE_CONTAINER)
    )


#: View columns holding JSON text (``types.JSONText``), by position in a row.
JSON_INDEXES: frozenset[int] = frozenset(
    ROW_INDEX[name] for name in VIEW_COLUMNS if isinstance(getattr(C, name).type, types.JSONText)
)


_DATES = frozenset({"created_at", "updated_at"})
_MYSQL_DIALECTS = frozenset({"mysql", "mariadb"})


def _stored_text(name: str, dates_as_text: bool) -> Any:
    """The column, but read as the text it stores (no JSON decoding on the way); with
    ``dates_as_text`` the dates as the text ``str()`` gives for them."""
    column = getattr(C, name)
    if ROW_INDEX[name] in JSON_INDEXES:
        return sa.type_coerce(column, sa.Text).label(name)
    if dates_as_text and name in _DATES:
        return sa.cast(column, sa.String).label(name)
    return column


# Lists read the registry's id and look the few registries up afterwards: the outer join
# made MariaDB deliver a 1000-row page in many more small reads (~30% more client CPU in
# benchmarks/read_path.py), for a column that is almost always NULL. JSON columns come back
# as their stored text, which is canonical (zun.db.types): the list view splices it
# (zun/api/views/containers.py); decoding 9 values per row cost more than the view.
_LIST_SELECT = [_stored_text(name, False) for name in VIEW_COLUMNS] + [C.id, C.registry_id]
# On MariaDB/MySQL the dates too: a DATETIME (Zun's type, no fractional seconds) cast to CHAR
# is "YYYY-MM-DD HH:MM:SS", what str() gives for the datetime PyMySQL would build, in pure
# Python, for the view to turn back into that text. (SQLite stores microseconds, PostgreSQL
# trims their zeros: there the dates stay datetimes.)
_LIST_SELECT_MYSQL = [_stored_text(name, True) for name in VIEW_COLUMNS] + [C.id, C.registry_id]


def decode_json_columns(row: Sequence[Any]) -> tuple[Any, ...]:
    """A row of :func:`list_for_view` with its JSON columns decoded, as the other reads give."""
    return tuple(types.decode(value) if i in JSON_INDEXES else value for i, value in enumerate(row))


def _with_registry_uuids(session: Session, rows: Sequence[Row[Any]]) -> list[tuple[Any, ...]]:
    """``rows`` (registry id last) with the registry's UUID in its place."""
    ids = {row[-1] for row in rows if row[-1] is not None}
    if not ids:
        return [(*row[:-1], None) for row in rows]
    found = dict(
        session.connection()
        .execute(
            sa.select(models.Registry.id, models.Registry.uuid).where(models.Registry.id.in_(ids))
        )
        .all()
    )
    return [(*row[:-1], found.get(row[-1])) for row in rows]


def not_found(ident: str) -> exception.ContainerNotFound:
    return exception.ContainerNotFound(container=ident)


def list_for_view(
    session: Session,
    context: RequestContext,
    *,
    all_projects: bool,
    filters: Mapping[str, Any],
    page: paging.Page,
) -> list[tuple[Any, ...]]:
    """One page of containers (capsules and their members excluded), in ONE query (and
    one more for the registries of the few rows that name one).

    Rows are in :data:`ROW_KEYS` order with the JSON columns (:data:`JSON_INDEXES`) as their
    stored text; :func:`decode_json_columns` decodes them. On MariaDB/MySQL the dates are
    text too (``YYYY-MM-DD HH:MM:SS``, what the view shows), elsewhere datetimes.

    The marker (when given) is looked up first within the same scope, so an unknown or
    invisible marker is a 404, as in the original.
    """
    columns = (
        _LIST_SELECT_MYSQL if session.get_bind().dialect.name in _MYSQL_DIALECTS else _LIST_SELECT
    )
    stmt = paging.project_scope(
        sa.select(*columns).where(C.container_type == consts.TYPE_CONTAINER),
        C,
        context,
        all_projects,
    )
    for key, value in filters.items():
        if key == "status":
            # What the list shows: Unknown for the engine statuses of an unhealthy host.
            stmt = stmt.where(host_health.status_condition(C.status, C.host, value))
        else:
            stmt = stmt.where(getattr(C, key) == value)
    marker_row = None
    if page.marker is not None:
        # The marker's JSON columns are stored text too, which is what a comparison with a
        # JSON column binds (JSONText.coerce_compared_value): sorting on labels pages.
        marker_row = session.execute(stmt.where(C.uuid == page.marker).limit(1)).first()
        if marker_row is None:
            raise not_found(page.marker)
    paging.check_sort_key(C, page.sort_key)
    keys = [page.sort_key] if page.sort_key == "id" else [page.sort_key, "id"]
    stmt = db_utils.paginate_query(
        stmt, C, page.limit, keys, marker=marker_row, sort_dir=page.sort_dir
    )
    # Plain columns: the Core path skips the ORM's result machinery (a third of the time).
    return _with_registry_uuids(session, session.connection().execute(stmt).all())


# Built once: a show must not pay for building and hashing its statement on every request.
_FIND_VIEW: dict[tuple[bool, bool], sa.Select[Any]] = {}


def _find_view_stmt(by_uuid: bool, wide: bool) -> sa.Select[Any]:
    stmt = _FIND_VIEW.get((by_uuid, wide))
    if stmt is None:
        stmt = _view_select()
        if not wide:
            stmt = stmt.where(C.project_id == sa.bindparam("project_id"))
        column = C.uuid if by_uuid else C.name
        stmt = _FIND_VIEW[(by_uuid, wide)] = stmt.where(column == sa.bindparam("ident")).limit(2)
    return stmt


#: The host's compute service columns :func:`find_view_row_and_service` appends to a view
#: row (labelled: the service has its own ``host``, ``created_at``, ``updated_at``).
SERVICE_KEYS: tuple[str, ...] = (
    "svc_host",
    "svc_last_seen_up",
    "svc_updated_at",
    "svc_created_at",
    "svc_forced_down",
    "svc_disabled",
    "svc_disabled_reason",
)
_FIND_VIEW_SERVICE: dict[tuple[bool, bool], DirectSelect] = {}


def _find_view_service_stmt(by_uuid: bool, wide: bool) -> sa.Select[Any]:
    return _find_view_service(by_uuid, wide).statement


def _find_view_service(by_uuid: bool, wide: bool) -> DirectSelect:
    select = _FIND_VIEW_SERVICE.get((by_uuid, wide))
    if select is None:
        S = models.ZunService
        # (host, binary) is unique: the join adds no row, so "two rows" still means two
        # containers of that name.
        stmt = (
            _find_view_stmt(by_uuid, wide)
            .outerjoin(S, sa.and_(S.host == C.host, S.binary == compute_nodes.COMPUTE_BINARY))
            .add_columns(*(getattr(S, key[4:]).label(key) for key in SERVICE_KEYS))
        )
        select = _FIND_VIEW_SERVICE[(by_uuid, wide)] = DirectSelect(stmt)
    return select


def find_view_row_and_service(
    context: RequestContext, ident: str
) -> tuple[Any, dict[str, Any], tuple[Any, ...] | None]:
    """The view columns of the container :func:`get_by_ident` would find (same scoping and
    errors: 404 ``not_found``, 409 for a name shared by several rows) and its host's compute
    service row, in ONE statement run straight on the driver (:mod:`zun.db.direct_select`):
    one statement is one snapshot, so it needs no transaction of its own.

    Returns the row (its view columns and :data:`SERVICE_KEYS` by name), the view columns as
    a dict in :data:`ROW_KEYS` order, and the service columns in :data:`SERVICE_KEYS` order
    (None when the container has no host or its host no service row).
    """
    wide = context.is_admin or context.all_projects
    params = {"ident": ident}
    if not wide:
        params["project_id"] = context.project_id
    rows = engine.select_rows(_find_view_service(uuidutils.is_uuid_like(ident), wide), params)
    if not rows:
        raise not_found(ident)
    if len(rows) > 1:
        raise exception.Conflict(
            message="Multiple containers exist with same name. Please use "
            "the container uuid instead."
        )
    row = rows[0]
    width = len(ROW_KEYS)
    service = tuple(row[width:])
    return (
        row,
        dict(zip(ROW_KEYS, row[:width], strict=True)),
        (service if service[0] is not None else None),
    )


def get_view_row(session: Session, uuid: str) -> Row[Any] | None:
    """The view columns of one container by UUID (no project scoping: the caller checked)."""
    return session.execute(_view_select().where(C.uuid == uuid)).first()


def get_by_ident(
    session: Session, context: RequestContext, ident: str, all_projects: bool | None = None
) -> models.Container:
    """The container named or identified by ``ident`` that the caller may see (404/409)."""
    return paging.get_by_ident(
        session,
        C,
        ident,
        context=context,
        not_found=not_found,
        singular="container",
        plural="containers",
        all_projects=all_projects,
        stmt=sa.select(C).where(C.container_type == consts.TYPE_CONTAINER),
    )


def get_by_uuid(session: Session, uuid: str) -> models.Container | None:
    return session.scalars(sa.select(C).where(C.uuid == uuid)).first()


def name_taken(
    session: Session, name: str, scope: str, project_id: str | None, exclude_uuid: str | None = None
) -> bool:
    """Whether ``name`` is used (case-insensitively) in ``scope`` (``project`` or ``global``)."""
    if not scope or not name:
        return False
    stmt = sa.select(C.id).where(sa.func.lower(C.name) == name.lower())
    if scope == "project":
        stmt = stmt.where(C.project_id == project_id)
    if exclude_uuid is not None:
        stmt = stmt.where(C.uuid != exclude_uuid)
    return session.execute(stmt.limit(1)).first() is not None


def ensure_name_available(
    session: Session,
    name: str | None,
    scope: str,
    project_id: str | None,
    exclude_uuid: str | None = None,
) -> None:
    """409 ``container-already-exists`` under ``[compute]/unique_container_name_scope``."""
    if name and name_taken(session, name, scope, project_id, exclude_uuid):
        raise exception.ContainerAlreadyExists(field="name", value=name.lower())


def insert(session: Session, values: Mapping[str, Any]) -> models.Container:
    row = C(**values)
    session.add(row)
    session.flush()
    return row


def update(session: Session, uuid: str, values: Mapping[str, Any]) -> int:
    """Unconditional UPDATE of one row; returns the number of rows changed."""
    return session.execute(sa.update(C).where(C.uuid == uuid).values(**values)).rowcount


def cas_update(
    session: Session,
    uuid: str,
    values: Mapping[str, Any],
    *,
    task_states: Iterable[str | None] | None = None,
    statuses: Iterable[str] | None = None,
    host: str | None = None,
) -> bool:
    """ONE conditional UPDATE of a container (compare-and-swap); True when the row changed.

    ``task_states``: the current task state must be one of them (None means "no task");
    ``statuses``: the current status must be one of them; ``host``: the row must be on it.
    The API claims a task with it, the nodes write final states with it.
    """
    stmt = sa.update(C).where(C.uuid == uuid)
    if task_states is not None:
        states = list(task_states)
        named = [s for s in states if s is not None]
        conds = []
        if named:
            conds.append(C.task_state.in_(named))
        if None in states:
            conds.append(C.task_state.is_(None))
        stmt = stmt.where(sa.or_(*conds) if conds else sa.false())
    if statuses is not None:
        stmt = stmt.where(C.status.in_(list(statuses)))
    if host is not None:
        stmt = stmt.where(C.host == host)
    return session.execute(stmt.values(**values)).rowcount == 1


def destroy(session: Session, uuid: str, statuses: Sequence[str] | None = None) -> bool:
    """Delete the row and its volume mappings; with ``statuses``, only in one of them.

    Actions, events and exec instances go by ON DELETE CASCADE (declared in the schema);
    volume mappings do not, so they are deleted here, before the row they point to."""
    found = sa.select(C.id).where(C.uuid == uuid)
    if statuses is not None:
        found = found.where(C.status.in_(list(statuses)))
    row_id = session.scalar(found.with_for_update())
    if row_id is None:
        return False
    session.execute(
        sa.delete(models.VolumeMapping).where(models.VolumeMapping.container_uuid == uuid)
    )
    return session.execute(sa.delete(C).where(C.id == row_id)).rowcount == 1
