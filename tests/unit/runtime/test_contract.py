"""zun.runtime.contract: the Docker driver offers every call of the stated runtime contract,
with the same parameters, so the node code can rely on the contract alone."""

from __future__ import annotations

import inspect

from zun.runtime.contract import ContainerRuntime
from zun.runtime.docker.driver import DockerDriver


def _calls() -> list[str]:
    return [
        name
        for name, value in vars(ContainerRuntime).items()
        if not name.startswith("_") and (callable(value) or isinstance(value, property))
    ]


def test_the_contract_states_the_calls_the_node_code_uses() -> None:
    calls = set(_calls())
    assert {
        "create",
        "start",
        "stop",
        "delete",
        "inspect",
        "wait_stopped",
        "list_labelled",
        "engine",
        "client",
    } <= calls


def test_the_docker_driver_keeps_the_contract() -> None:
    for name in _calls():
        stated = vars(ContainerRuntime)[name]
        offered = getattr(DockerDriver, name, None)
        assert offered is not None, f"DockerDriver has no {name}"
        if isinstance(stated, property):
            assert isinstance(offered, property), name
            continue
        wanted = list(inspect.signature(stated).parameters)
        got = list(inspect.signature(offered).parameters)
        if got and got[0] != "self":  # a staticmethod (engine_ref)
            got = ["self", *got]
        assert got[: len(wanted)] == wanted, (name, wanted, got)


def test_every_stated_call_says_what_it_promises_or_is_plain_io() -> None:
    # The promises are the point of the contract: lifecycle calls must state them.
    for name in ("create", "start", "stop", "kill", "wait_stopped", "delete", "update"):
        assert (vars(ContainerRuntime)[name].__doc__ or "").strip(), name
