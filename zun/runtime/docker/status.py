"""Docker's view of a container, turned into Zun's status fields.

One pure function, :func:`map_docker_state`, used by ``show`` and by the periodic state sync.
It reproduces the original mapping (vectors ``docker_state_mapping``) with two deliberate
differences where the original crashed instead of answering:

* an ``Error`` state without ``Status`` keeps the current status (the original raised
  AttributeError);
* a state without ``StartedAt`` counts as never started (the original raised TypeError).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from zun.common import consts
from zun.common.utils import format_status_detail

REASON_STATE_MISSING = "container state is missing"
REASON_UNEXPECTED_STATE = "unexpected container state"

# State strings of Docker's list view (lower-cased) that map directly.
_LIST_STATES = {
    "paused": consts.PAUSED,
    "running": consts.RUNNING,
    "dead": consts.DEAD,
    "restarting": consts.RESTARTING,
    "exited": consts.STOPPED,
    "removing": consts.STOPPED,
}

# Statuses a never-started container keeps: Zun put them there itself on purpose.
_KEPT_WHEN_CREATED = (consts.CREATED, consts.RESTARTING, consts.ERROR, consts.REBUILDING)

_ZERO_TIME_PREFIX = "0001-01-01"


@dataclass(frozen=True)
class StatusFields:
    status: str | None
    status_reason: str | None
    status_detail: str | None


def _is_set(timestamp: str | None) -> bool:
    return bool(timestamp) and not str(timestamp).startswith(_ZERO_TIME_PREFIX)


def _from_list_state(state: str, current: StatusFields) -> StatusFields:
    lowered = state.lower()
    if lowered == "created":
        if current.status == consts.CREATING:
            return StatusFields(consts.CREATED, current.status_reason, None)
        if current.status in _KEPT_WHEN_CREATED:
            return StatusFields(current.status, current.status_reason, None)
        return StatusFields(consts.UNKNOWN, REASON_UNEXPECTED_STATE, None)
    if lowered in _LIST_STATES:
        return StatusFields(_LIST_STATES[lowered], current.status_reason, None)
    return StatusFields(consts.UNKNOWN, REASON_UNEXPECTED_STATE, None)


def _with_age(template: str, timestamp: str | None, now: datetime.datetime | None) -> str | None:
    """``template`` filled with the age of ``timestamp``; None when the age is None."""
    age = format_status_detail(timestamp or "", now=now)
    return None if age is None else template.format(age=age)


def _from_inspect_state(
    state: dict[str, Any], current: StatusFields, now: datetime.datetime | None
) -> StatusFields:
    reason = current.status_reason
    if state.get("Error"):
        docker_status = state.get("Status")
        if docker_status in ("exited", "removing"):
            status = consts.STOPPED
        elif docker_status and docker_status.capitalize() in consts.CONTAINER_STATUSES:
            status = docker_status.capitalize()
        else:
            status = current.status
        template = "Exited(" + str(state.get("ExitCode")) + ") {age} ago (error)"
        return StatusFields(status, reason, _with_age(template, state.get("FinishedAt"), now))
    if state.get("Paused"):
        return StatusFields(
            consts.PAUSED, reason, _with_age("Up {age} (paused)", state.get("StartedAt"), now)
        )
    if state.get("Restarting"):
        return StatusFields(consts.RESTARTING, reason, "Restarting")
    if state.get("Running"):
        return StatusFields(
            consts.RUNNING, reason, _with_age("Up {age}", state.get("StartedAt"), now)
        )
    if state.get("Dead"):
        return StatusFields(consts.DEAD, reason, "Dead")

    started_at, finished_at = state.get("StartedAt"), state.get("FinishedAt")
    if not _is_set(started_at):
        if current.status == consts.CREATING:
            return StatusFields(consts.CREATED, reason, "Created")
        return current
    if not _is_set(finished_at):
        return StatusFields(consts.UNKNOWN, REASON_UNEXPECTED_STATE, "")
    # Unlike the other branches, a zero age is printed as "None" here: Zun's exact output.
    age = format_status_detail(finished_at, now=now)
    return StatusFields(consts.STOPPED, reason, f"Exited({state.get('ExitCode')}) {age} ago ")


def map_docker_state(
    state: dict[str, Any] | str | None,
    *,
    status: str | None,
    status_reason: str | None = None,
    status_detail: str | None = None,
    task_state: str | None = None,
    force: bool = False,
    now: datetime.datetime | None = None,
) -> StatusFields:
    """New ``(status, status_reason, status_detail)`` of a container from Docker's state.

    ``state`` is the ``State`` dict of an inspect or the ``State`` string of a list row.
    ``status``, ``status_reason`` and ``status_detail`` are the container's current values:
    whatever the mapping does not touch is returned unchanged. While an operation runs
    (``task_state`` set) nothing changes unless ``force``. ``now`` (naive UTC) fixes the clock
    used for the age in ``status_detail``.
    """
    current = StatusFields(status, status_reason, status_detail)
    if task_state and not force:
        return current
    if not state:
        return StatusFields(consts.UNKNOWN, REASON_STATE_MISSING, None)
    if isinstance(state, str):
        return _from_list_state(state, current)
    return _from_inspect_state(state, current, now)
