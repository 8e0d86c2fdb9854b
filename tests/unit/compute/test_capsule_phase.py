"""The phase of a capsule from its members (zun.compute.capsule_phase.capsule_phase)."""

from __future__ import annotations

import pytest

from zun.common import consts
from zun.compute.capsule_phase import PHASE_STATUS, capsule_phase

RUN, STOP, ERR = consts.RUNNING, consts.STOPPED, consts.ERROR
CREATING, CREATED, UNKNOWN = consts.CREATING, consts.CREATED, consts.UNKNOWN


@pytest.mark.parametrize(
    ("inits", "containers", "policy", "phase"),
    [
        ([], [(CREATING, None)], "always", consts.CAPSULE_PENDING),
        ([(CREATING, None)], [(CREATING, None)], "always", consts.CAPSULE_PENDING),
        ([(STOP, 0)], [(CREATED, None)], "always", consts.CAPSULE_PENDING),
        ([(STOP, 0)], [(RUN, None), (STOP, 0)], "no", consts.CAPSULE_RUNNING),
        ([(STOP, 3)], [(CREATING, None)], "no", consts.CAPSULE_FAILED),
        ([(ERR, None)], [(CREATING, None)], "always", consts.CAPSULE_FAILED),
        ([], [(STOP, 0), (STOP, 0)], "no", consts.CAPSULE_SUCCEEDED),
        ([], [(STOP, 0)], "on-failure", consts.CAPSULE_SUCCEEDED),
        ([], [(STOP, 0)], "always", consts.CAPSULE_RUNNING),  # the engine starts it again
        ([], [(STOP, 0), (STOP, 2)], "no", consts.CAPSULE_FAILED),
        ([], [(STOP, 2)], "on-failure", consts.CAPSULE_RUNNING),
        ([], [(ERR, None)], "always", consts.CAPSULE_FAILED),
        ([], [(RUN, None), (UNKNOWN, None)], "always", consts.CAPSULE_UNKNOWN),
        ([], [(consts.RESTARTING, None)], "always", consts.CAPSULE_RUNNING),
    ],
)
def test_phase(inits: list, containers: list, policy: str, phase: str) -> None:
    assert capsule_phase(inits, containers, policy) == phase


def test_every_phase_has_a_status_clients_know() -> None:
    assert set(PHASE_STATUS) == set(consts.CAPSULE_STATUSES)
    assert set(PHASE_STATUS.values()) <= set(consts.CONTAINER_STATUSES)
