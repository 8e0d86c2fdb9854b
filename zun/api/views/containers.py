"""The container view (rest-api.md §16.1), built straight from row columns.

:func:`formatter` decides once per request which keys the caller may see (the
``container:get_one:<key>`` field rules) and returns a function that turns one row into a
dict with no further policy work; a list of 1000 rows costs 1000 small dict builds.

Formats: ``memory`` is a string of MiB, ``disk`` an int (0 until the node sets it),
``cpu_policy`` ``shared`` unless set, datetimes ``YYYY-MM-DD HH:MM:SS[.ffffff]``,
``registry_id`` the registry's UUID. JSON columns read back as ``{}``/``[]`` when empty, as
from Zun's database. ``links`` only on single-container answers (or with ``resource_url``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from zun.api import common
from zun.common import consts, policy
from zun.common.context import RequestContext

VIEW_KEYS: tuple[str, ...] = (
    "uuid", "name", "image", "project_id", "user_id", "command", "entrypoint", "status",
    "status_reason", "status_detail", "task_state", "cpu", "memory", "disk", "cpu_policy",
    "environment", "labels", "workdir", "hostname", "ports", "addresses", "restart_policy",
    "interactive", "tty", "auto_remove", "auto_heal", "image_driver", "security_groups",
    "healthcheck", "registry_id", "created_at", "updated_at", "host", "image_pull_policy",
    "privileged", "runtime",
)

FIELD_RULE_PREFIX = "container:get_one"

_DICT_KEYS = frozenset({"environment", "labels", "addresses", "restart_policy", "healthcheck"})
_LIST_KEYS = frozenset({"command", "entrypoint", "ports", "security_groups"})


def _memory(value: Any) -> str | None:
    return None if value is None else str(value)


def _getter(key: str) -> Callable[[Mapping[str, Any]], Any]:
    """How one key is read from a row mapping (a tiny closure per key, built once)."""
    if key == "memory":
        return lambda r: _memory(r["memory"])
    if key == "disk":
        return lambda r: r["disk"] or 0
    if key == "cpu_policy":
        return lambda r: r["cpu_policy"] or consts.CPU_POLICY_SHARED
    if key in ("created_at", "updated_at"):
        return lambda r: common.format_datetime(r[key])
    if key == "registry_id":
        return lambda r: r.get("registry_uuid")
    if key in _DICT_KEYS:
        return lambda r: r[key] if r[key] is not None else {}
    if key in _LIST_KEYS:
        return lambda r: r[key] if r[key] is not None else []
    return lambda r: r[key]


_GETTERS: dict[str, Callable[[Mapping[str, Any]], Any]] = {k: _getter(k) for k in VIEW_KEYS}


def formatter(context: RequestContext, link_base: str | None = None,
              ) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """A row -> view function for this caller; ``link_base`` adds ``links`` to each item.

    The field rules are evaluated here, once. Only a deployment whose policy makes them depend
    on the row (``project_id:%(project_id)s``) pays for per-row checks.
    """
    if policy.field_rules_depend_on_target(FIELD_RULE_PREFIX):
        return _per_row_formatter(context, link_base)
    hidden = policy.hidden_fields(context, FIELD_RULE_PREFIX, VIEW_KEYS)
    getters = tuple((k, _GETTERS[k]) for k in VIEW_KEYS if k not in hidden)
    if link_base is None:
        return lambda row: {k: get(row) for k, get in getters}

    def with_links(row: Mapping[str, Any]) -> dict[str, Any]:
        view = {k: get(row) for k, get in getters}
        view["links"] = common.links(link_base, "containers", row["uuid"])
        return view

    return with_links


def _per_row_formatter(context: RequestContext, link_base: str | None,
                       ) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    def fmt(row: Mapping[str, Any]) -> dict[str, Any]:
        target = {"project_id": row["project_id"], "user_id": row["user_id"]}
        hidden = policy.hidden_fields(context, FIELD_RULE_PREFIX, VIEW_KEYS, target)
        view = {k: _GETTERS[k](row) for k in VIEW_KEYS if k not in hidden}
        if link_base is not None:
            view["links"] = common.links(link_base, "containers", row["uuid"])
        return view

    return fmt


def render_one(context: RequestContext, row: Mapping[str, Any], host_url: str) -> dict[str, Any]:
    """A single container, with links (show, create, update, rename, resize_container)."""
    return formatter(context, host_url)(row)
