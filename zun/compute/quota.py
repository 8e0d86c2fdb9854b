"""Project quotas: limits, usage and the atomic check made when a container row is written.

Resources (rest-api.md §14): ``containers``, ``memory`` (MiB), ``cpu``, ``disk`` (GiB); ``-1``
means unlimited. A project's limit for a resource is, in order: its own ``quotas`` row, the
``default`` quota class, the ``[quota]`` option. Usage is derived from the project's plain
container rows (capsules and their members are not counted), so deleting a row gives the
quota back and there is nothing to drift.

Unlike Zun, whose check could let two concurrent requests both pass, the check here is atomic:
:func:`enforce_in_transaction` takes the project's lock row in ``quota_usages`` with
``SELECT ... FOR UPDATE`` and counts the rows while holding it; the caller inserts (or updates)
its container row in the same transaction, and the lock is released when that transaction
ends. Concurrent creates in one project are therefore serialised, and exactly as many as the
limit allows succeed. Different projects do not wait for each other.

``[quota]/driver = zun.common.quota.NoopQuotaDriver`` (Zun's name, kept so that existing
configuration files work) turns quotas off: every limit reads
``-1`` and nothing is enforced, as with Zun's no-op driver.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.orm import Session

from zun.common import exception
from zun.common.context import RequestContext
from zun.conf import CONF
from zun.db.queries import quotas as quota_q

RESOURCES = ("containers", "memory", "cpu", "disk")
DEFAULT_CLASS = "default"
NOOP_DRIVER = "zun.common.quota.NoopQuotaDriver"
UNLIMITED = -1

OverQuota = exception.OverQuota


def enabled() -> bool:
    """False with the no-op driver."""
    driver = str(CONF.quota.driver or "")
    return not driver.endswith("NoopQuotaDriver")


def config_defaults() -> dict[str, int]:
    """The ``[quota]`` options."""
    return {res: int(getattr(CONF.quota, res)) for res in RESOURCES}


def _fill(rows: Mapping[str, int | None], fallback: Mapping[str, int]) -> dict[str, int]:
    return {
        res: int(rows[res]) if rows.get(res) is not None else int(fallback[res])
        for res in RESOURCES
    }


def _unlimited() -> dict[str, int]:
    return dict.fromkeys(RESOURCES, UNLIMITED)


def get_defaults(session: Session) -> dict[str, int]:
    """The limits a project without its own rows gets: class ``default``, else ``[quota]``."""
    if not enabled():
        return _unlimited()
    return _fill(quota_q.class_limits(session, DEFAULT_CLASS), config_defaults())


def get_class_limits(session: Session, class_name: str) -> dict[str, int]:
    """A quota class's limits; resources it does not set come from ``[quota]`` (as in Zun)."""
    if not enabled():
        return _unlimited()
    return _fill(quota_q.class_limits(session, class_name), config_defaults())


def get_project_limits(session: Session, project_id: str) -> dict[str, int]:
    """The effective limits of a project."""
    if not enabled():
        return _unlimited()
    return _fill(quota_q.project_limits(session, project_id), get_defaults(session))


def get_project_usages(session: Session, project_id: str) -> dict[str, dict[str, float]]:
    """``{resource: {"limit": n, "in_use": m}}`` (the ``?usages`` form of GET quotas)."""
    limits = get_project_limits(session, project_id)
    if not enabled():
        return {res: {"limit": UNLIMITED, "in_use": UNLIMITED} for res in RESOURCES}
    usage = quota_q.project_usage(session, project_id)
    return {res: {"limit": limits[res], "in_use": usage[res]} for res in RESOURCES}


def _check_values(values: Mapping[str, Any]) -> dict[str, int]:
    checked: dict[str, int] = {}
    for res, value in values.items():
        if res not in RESOURCES:
            raise exception.InvalidQuotaValue(message=f"Unknown quota resource {res}.")
        number = int(value)
        if number < UNLIMITED:
            raise exception.InvalidQuotaValue(
                message=f"Quota limit {number} for {res} must be -1 or greater."
            )
        checked[res] = number
    return checked


def set_project_limits(session: Session, project_id: str, values: Mapping[str, Any]) -> None:
    """Upsert the given resources' limits of a project (serialised per project)."""
    checked = _check_values(values)
    quota_q.lock_project(session, project_id)
    quota_q.set_project_limits(session, project_id, checked)


def set_class_limits(session: Session, class_name: str, values: Mapping[str, Any]) -> None:
    quota_q.set_class_limits(session, class_name, _check_values(values))


def delete_project_limits(session: Session, project_id: str) -> None:
    """Drop every limit row of the project (it falls back to the defaults)."""
    quota_q.lock_project(session, project_id)
    quota_q.delete_project_limits(session, project_id)


def enforce_in_transaction(
    session: Session,
    context: RequestContext | None,
    project_id: str | None,
    requested: Mapping[str, float],
) -> None:
    """Raise :class:`OverQuota` (403) if adding ``requested`` would exceed a project limit.

    ``requested``: amounts to add, keyed by ``containers``, ``cpu``, ``memory`` (MiB) and
    ``disk`` (GiB); missing keys and values <= 0 are not checked (so shrinking, or lowering a
    limit below what is already used, never blocks a request that does not grow).

    Takes the project's quota lock in ``session``'s transaction and keeps it until that
    transaction ends: the caller must write its container row in the same transaction, after
    this call. ``context`` is accepted for the API's symmetry and is not needed.
    """
    del context
    if not enabled() or not project_id:
        return
    growing = {
        res: float(requested[res])
        for res in RESOURCES
        if requested.get(res) is not None and float(requested[res]) > 0
    }
    if not growing:
        return
    quota_q.lock_project(session, project_id)
    limits = get_project_limits(session, project_id)
    checked = {res: amount for res, amount in growing.items() if limits[res] != UNLIMITED}
    if not checked:
        return
    usage = quota_q.project_usage(session, project_id, locking=True)
    overs = sorted(res for res, amount in checked.items() if usage[res] + amount > limits[res])
    if overs:
        raise OverQuota(overs=overs)
