"""The phase of a capsule, from its members' states (Kubernetes-like, as Zun's capsules).

Statuses keep Zun's strings (clients compare them); the phases of ``consts.CAPSULE_STATUSES``
decide them through :data:`PHASE_STATUS`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from zun.common import consts

# Phase -> the status string the API shows (clients compare Zun's container statuses). A
# capsule that ends (Succeeded, Failed) has its sandbox stopped, so the periodic sync, which maps
# the sandbox's state onto the capsule as in Zun, agrees: Stopped, the reason saying which.
PHASE_STATUS = {
    consts.CAPSULE_PENDING: consts.CREATING,
    consts.CAPSULE_RUNNING: consts.RUNNING,
    consts.CAPSULE_SUCCEEDED: consts.STOPPED,
    consts.CAPSULE_FAILED: consts.STOPPED,
    consts.CAPSULE_UNKNOWN: consts.UNKNOWN,
}
_EXIT_CODE = re.compile(r"Exited \((-?\d+)\)")


def exit_code(engine_status: str | None) -> int | None:
    """The exit code in an engine list row's ``Status`` ("Exited (2) 3 seconds ago")."""
    found = _EXIT_CODE.search(engine_status or "")
    return int(found.group(1)) if found else None


def capsule_phase(
    init_containers: Sequence[tuple[str | None, int | None]],
    containers: Sequence[tuple[str | None, int | None]],
    restart_policy: str | None = None,
) -> str:
    """The phase of a capsule from its members' ``(status, exit code)``.

    ``Failed``: an init container failed, or a container ended non-zero and will not be
    restarted (policy ``no``); ``Succeeded``: every container ended with 0 and none will be
    restarted (policy ``no`` or ``on-failure``); ``Pending``: a member is not created or an
    init container has not ended; ``Running``: a container runs (or is being restarted);
    ``Unknown``: anything else (a member in ``Unknown``).
    """
    members = [*init_containers, *containers]
    if any(status == consts.UNKNOWN for status, _ in members):
        return consts.CAPSULE_UNKNOWN
    if any(
        status == consts.ERROR or (status == consts.STOPPED and code not in (0, None))
        for status, code in init_containers
    ):
        return consts.CAPSULE_FAILED
    if any(status != consts.STOPPED for status, _ in init_containers):
        return consts.CAPSULE_PENDING
    if any(status in (consts.CREATING, consts.CREATED) for status, _ in containers):
        return consts.CAPSULE_PENDING
    if any(
        status in (consts.RUNNING, consts.RESTARTING, consts.PAUSED) for status, _ in containers
    ):
        return consts.CAPSULE_RUNNING
    ended = [code for status, code in containers if status == consts.STOPPED]
    if len(ended) == len(containers):
        if all(code == 0 for code in ended) and restart_policy != "always":
            return consts.CAPSULE_SUCCEEDED
        if restart_policy == "no" or any(status == consts.ERROR for status, _ in containers):
            return consts.CAPSULE_FAILED
        return consts.CAPSULE_RUNNING  # the engine restarts them
    return consts.CAPSULE_FAILED
