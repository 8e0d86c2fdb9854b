"""Docker state -> Zun status against all ``docker_state_mapping`` vectors."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from reference import vectors

from zun.common import consts
from zun.runtime.docker.status import map_docker_state

FROZEN_NOW = datetime.datetime(2026, 1, 15, 12, 0, 0)
PREVIOUS = "(previous)"


def _load_vectors() -> dict[str, Any]:
    return vectors()


_SECTION = _load_vectors()["docker_state_mapping"]
CASES = _SECTION["cases"]


def _id(i: int, c: dict[str, Any]) -> str:
    inp = c["input"]
    return f"{i}-{c['state_name']}-{inp['previous_status']}-{inp['task_state']}-{inp['force']}"


def _map(case: dict[str, Any]) -> Any:
    inp = case["input"]
    return map_docker_state(
        inp["state"],
        status=inp["previous_status"],
        status_reason=PREVIOUS,
        status_detail=PREVIOUS,
        task_state=inp["task_state"],
        force=inp["force"],
        now=FROZEN_NOW,
    )


def test_all_vectors_present() -> None:
    assert len(CASES) == 756


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=_id(i, c)) for i, c in enumerate(CASES) if "output" in c]
)
def test_docker_state_mapping(case: dict[str, Any]) -> None:
    out = case["output"]
    got = _map(case)
    assert got.status == out["status"]
    assert got.status_reason == out["status_reason"]
    assert got.status_detail == out["status_detail_frozen_clock"]
    first = None if got.status_detail is None else got.status_detail.split(" ")[0]
    assert first == out["status_detail_first_word"]


# Where the original crashed, we answer: these are the documented differences.
@pytest.mark.parametrize(
    "case", [pytest.param(c, id=_id(i, c)) for i, c in enumerate(CASES) if "error" in c]
)
def test_states_that_crashed_the_original(case: dict[str, Any]) -> None:
    inp = case["input"]
    got = _map(case)
    if inp["task_state"] and not inp["force"]:
        assert (got.status, got.status_reason, got.status_detail) == (
            inp["previous_status"],
            PREVIOUS,
            PREVIOUS,
        )
    elif case["state_name"] == "error/no-status":
        # Error without Status: the status stays, the detail tells the exit.
        assert got.status == inp["previous_status"]
        assert got.status_detail == "Exited(3) 3 days ago (error)"
    else:
        assert case["state_name"] == "missing-startedat"
        # No StartedAt counts as never started.
        expected = (
            consts.CREATED if inp["previous_status"] == consts.CREATING else inp["previous_status"]
        )
        assert got.status == expected


def test_default_clock_is_now() -> None:
    started = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=2)
    got = map_docker_state(
        {"Running": True, "StartedAt": started.strftime("%Y-%m-%dT%H:%M:%SZ")},
        status=consts.CREATED,
    )
    assert got.status == consts.RUNNING
    assert got.status_detail == "Up 2 hours"
