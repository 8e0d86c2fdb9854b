"""The container view (rest-api.md §16.1), built straight from row tuples.

:func:`formatter` decides once per request which keys the caller may see (the
``container:get_one:<key>`` field rules) and which column feeds each key, then returns a
function that turns one row (in :data:`zun.db.queries.containers.ROW_KEYS` order) into a dict
by position, with no further policy or name lookups: a list of 1000 rows costs 1000 small
dict builds.

Formats: ``memory`` is the stored string of MiB, ``disk`` an int (0 until the node sets it),
``cpu_policy`` ``shared`` unless set, datetimes ``YYYY-MM-DD HH:MM:SS[.ffffff]``,
``registry_id`` the registry's UUID. JSON columns read back as ``{}``/``[]`` when empty, as
from Zun's database. ``links`` only on single-container answers (or with ``resource_url``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zun.api import common
from zun.common import consts, policy
from zun.common.context import RequestContext
from zun.compute import node_health
from zun.db.queries.containers import ROW_INDEX, ROW_KEYS

VIEW_KEYS: tuple[str, ...] = (
    "uuid", "name", "image", "project_id", "user_id", "command", "entrypoint", "status",
    "status_reason", "status_detail", "task_state", "cpu", "memory", "disk", "cpu_policy",
    "environment", "labels", "workdir", "hostname", "ports", "addresses", "restart_policy",
    "interactive", "tty", "auto_remove", "auto_heal", "image_driver", "security_groups",
    "healthcheck", "registry_id", "created_at", "updated_at", "host", "image_pull_policy",
    "privileged", "runtime",
)

FIELD_RULE_PREFIX = "container:get_one"

# Keys whose empty (NULL or falsy) value is shown as a default. The defaults are shared
# between rows: views are serialized at once and never mutated.
_DEFAULTS: dict[str, Any] = {
    "disk": 0, "cpu_policy": consts.CPU_POLICY_SHARED,
    "environment": {}, "labels": {}, "addresses": {}, "restart_policy": {}, "healthcheck": {},
    "command": [], "entrypoint": [], "ports": [], "security_groups": [],
}
_DATES = frozenset({"created_at", "updated_at"})
_SOURCE = {"registry_id": "registry_uuid"}

Row = Sequence[Any]


def _plan(visible: Sequence[str]) -> tuple[list[tuple[str, int]], list[tuple[str, int, Any]],
                                            list[tuple[str, int]]]:
    plain, defaulted, dates = [], [], []
    for key in visible:
        index = ROW_INDEX[_SOURCE.get(key, key)]
        if key in _DEFAULTS:
            defaulted.append((key, index, _DEFAULTS[key]))
        elif key in _DATES:
            dates.append((key, index))
        else:
            plain.append((key, index))
    return plain, defaulted, dates


def _builder(visible: Sequence[str], link_base: str | None) -> Callable[[Row], dict[str, Any]]:
    plain, defaulted, dates = _plan(visible)
    uuid_index = ROW_INDEX["uuid"]

    def build(row: Row) -> dict[str, Any]:
        view = {key: row[i] for key, i in plain}
        for key, i, default in defaulted:
            view[key] = row[i] or default
        for key, i in dates:
            value = row[i]
            # Naive UTC from the database: str() is the view's format.
            view[key] = None if value is None else str(value)
        if link_base is not None:
            view["links"] = common.links(link_base, "containers", row[uuid_index])
        return view

    return build


def formatter(context: RequestContext, link_base: str | None = None,
              ) -> Callable[[Row], dict[str, Any]]:
    """A row -> view function for this caller; ``link_base`` adds ``links`` to each item.

    The field rules are evaluated here, once. Only a deployment whose policy makes them depend
    on the row (``project_id:%(project_id)s``) pays for per-row checks.
    """
    if policy.field_rules_depend_on_target(FIELD_RULE_PREFIX):
        return _per_row_formatter(context, link_base)
    hidden = policy.hidden_fields(context, FIELD_RULE_PREFIX, VIEW_KEYS)
    return _builder([k for k in VIEW_KEYS if k not in hidden], link_base)


def _per_row_formatter(context: RequestContext, link_base: str | None,
                       ) -> Callable[[Row], dict[str, Any]]:
    project_index, user_index = ROW_INDEX["project_id"], ROW_INDEX["user_id"]
    builders: dict[frozenset[str], Callable[[Row], dict[str, Any]]] = {}

    def fmt(row: Row) -> dict[str, Any]:
        target = {"project_id": row[project_index], "user_id": row[user_index]}
        hidden = policy.hidden_fields(context, FIELD_RULE_PREFIX, VIEW_KEYS, target)
        build = builders.get(hidden)
        if build is None:
            build = builders[hidden] = _builder([k for k in VIEW_KEYS if k not in hidden],
                                                link_base)
        return build(row)

    return fmt


def as_row(values: Mapping[str, Any]) -> tuple[Any, ...]:
    """A mapping of row values (e.g. refreshed by the node) back into row order."""
    return tuple(values.get(key) for key in ROW_KEYS)


def render_one(context: RequestContext, row: Row, host_url: str) -> dict[str, Any]:
    """A single container, with links (show, create, update, rename, resize_container)."""
    return formatter(context, host_url)(row)


def health_marker(rows: Sequence[Row], unhealthy: Mapping[str, str] | None = None,
                  ) -> Callable[[Row, dict[str, Any]], dict[str, Any]]:
    """Marks the views of rows whose host is down or engine-less ``Unknown`` (with why).

    One query for the hosts of ``rows``, unless ``unhealthy`` is given already.
    """
    host_index, status_index = ROW_INDEX["host"], ROW_INDEX["status"]
    if unhealthy is None:
        hosts = {row[host_index] for row in rows if row[host_index]}
        unhealthy = node_health.read_unhealthy(hosts) if hosts else {}
    return node_health.overlay(lambda row: row[host_index], lambda row: row[status_index],
                               unhealthy)
