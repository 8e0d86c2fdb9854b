"""The capsule view (rest-api.md §16.2), in the two shapes of the microversions.

From 1.32: ``name``, ``labels``, ``restart_policy`` as an object. Up to 1.31 (legacy):
``meta_name``, ``meta_labels``, ``restart_policy`` as the policy's name, and the constant
placeholders ``volumes_info``, ``containers_uuids``, ``init_containers_uuids``,
``capsule_version``. Both carry ``containers`` and ``init_containers``: container views
(without links) filtered by the ``container:get_one:<field>`` rules. Every capsule key is
filtered by ``capsule:get:<key>`` (``host`` is admin-only by default).

The field rules are evaluated once per request unless an operator's policy makes them depend on
the row (``%(project_id)s``); a list then evaluates them per capsule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zun.api import common
from zun.api.views import containers as container_views
from zun.common import consts, policy
from zun.common.context import RequestContext
from zun.compute import node_health

FIELD_RULE_PREFIX = "capsule:get"
COLLECTION = "capsules"

KEYS: tuple[str, ...] = (
    "uuid",
    "links",
    "name",
    "project_id",
    "user_id",
    "cpu",
    "memory",
    "status",
    "status_reason",
    "labels",
    "addresses",
    "restart_policy",
    "annotations",
    "created_at",
    "updated_at",
    "host",
    "containers",
    "init_containers",
)
LEGACY_KEYS: tuple[str, ...] = (
    "uuid",
    "links",
    "volumes_info",
    "containers_uuids",
    "init_containers_uuids",
    "capsule_version",
    "meta_name",
    "project_id",
    "user_id",
    "cpu",
    "memory",
    "status",
    "status_reason",
    "meta_labels",
    "addresses",
    "restart_policy",
    "annotations",
    "created_at",
    "updated_at",
    "host",
    "containers",
    "init_containers",
)
_PLACEHOLDERS: dict[str, Callable[[], Any]] = {
    "volumes_info": dict,
    "containers_uuids": list,
    "init_containers_uuids": list,
    "capsule_version": str,
}


def _memory(value: Any) -> str:
    return "0" if value in (None, "") else str(value)


def _values(capsule: Any, host_url: str, legacy: bool) -> dict[str, Any]:
    restart = capsule.restart_policy or {}
    values: dict[str, Any] = {
        "uuid": capsule.uuid,
        "links": common.links(host_url, COLLECTION, capsule.uuid),
        "project_id": capsule.project_id,
        "user_id": capsule.user_id,
        "cpu": float(capsule.cpu or 0),
        "memory": _memory(capsule.memory),
        "status": capsule.status,
        "status_reason": capsule.status_reason,
        "addresses": capsule.addresses or {},
        "annotations": capsule.annotations,
        "created_at": common.format_datetime(capsule.created_at),
        "updated_at": common.format_datetime(capsule.updated_at),
        "host": capsule.host,
    }
    if legacy:
        values["meta_name"] = capsule.name
        values["meta_labels"] = capsule.labels or {}
        values["restart_policy"] = restart.get("Name")
        for key, make in _PLACEHOLDERS.items():
            values[key] = make()
    else:
        values["name"] = capsule.name
        values["labels"] = capsule.labels or {}
        values["restart_policy"] = restart
    return values


class Renderer:
    """Turns capsule rows (ORM objects) and their member view rows into views."""

    def __init__(
        self,
        context: RequestContext,
        host_url: str,
        legacy: bool,
        unhealthy: Mapping[str, str] | None = None,
    ) -> None:
        """``unhealthy``: ``{host: reason}`` of the hosts that cannot vouch for their
        containers (:mod:`zun.compute.node_health`): their capsules and members read
        ``Unknown``, as plain containers do."""
        self.context = context
        unhealthy = unhealthy or {}
        self._mark_capsule = node_health.overlay(lambda c: c.host, lambda c: c.status, unhealthy)
        self._mark_member = container_views.health_marker((), unhealthy)
        self.host_url = host_url
        self.legacy = legacy
        self.keys = LEGACY_KEYS if legacy else KEYS
        self.member = container_views.formatter(context)
        self._per_row = policy.field_rules_depend_on_target(FIELD_RULE_PREFIX)
        self._hidden = (
            None if self._per_row else policy.hidden_fields(context, FIELD_RULE_PREFIX, self.keys)
        )

    def __call__(self, capsule: Any, member_rows: Sequence[Any]) -> dict[str, Any]:
        hidden = self._hidden
        if hidden is None:
            target = {"project_id": capsule.project_id, "user_id": capsule.user_id}
            hidden = policy.hidden_fields(self.context, FIELD_RULE_PREFIX, self.keys, target)
        values = self._mark_capsule(capsule, _values(capsule, self.host_url, self.legacy))
        type_index = len(container_views.ROW_KEYS) + 1  # capsule_id, then container_type
        mark = self._mark_member
        values["containers"] = [
            mark(r, self.member(r))
            for r in member_rows
            if r[type_index] == consts.TYPE_CAPSULE_CONTAINER
        ]
        values["init_containers"] = [
            mark(r, self.member(r))
            for r in member_rows
            if r[type_index] == consts.TYPE_CAPSULE_INIT_CONTAINER
        ]
        return {key: values[key] for key in self.keys if key not in hidden}
