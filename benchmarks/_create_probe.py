"""zun-all with timers around each step of a create (used by create_steps.py only).

    python benchmarks/_create_probe.py <zun-all arguments>

Wraps, from the outside, the functions a create goes through and appends one JSON line per
step to the file named by ``ZUN_BENCH_STEPS``: ``{"uuid", "step", "start", "end"}`` (wall
clock, as the client's). Nothing in ``zun/`` knows about it.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

_OUT = open(os.environ["ZUN_BENCH_STEPS"], "a", buffering=1)  # noqa: SIM115 - process-long
_LOCK = threading.Lock()
_LOCAL = threading.local()


def _record(uuid: str | None, step: str, start: float, end: float) -> None:
    if not uuid:
        return
    line = json.dumps({"uuid": uuid, "step": step, "start": start, "end": end})
    with _LOCK:
        _OUT.write(line + "\n")


def _wrap(
    owner: Any, name: str, step: str, uuid_of: Callable[..., str | None], static: bool = False
) -> None:
    original = getattr(owner, name)

    @functools.wraps(original)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.time()
        try:
            return original(*args, **kwargs)
        finally:
            _record(uuid_of(*args, **kwargs), step, start, time.time())

    setattr(owner, name, staticmethod(timed) if static else timed)


def _row_uuid(_self: Any, row: Any, *_a: Any, **_k: Any) -> str | None:
    return row["uuid"] if isinstance(row, dict) else getattr(row, "uuid", None)


def install() -> None:
    from zun.compute import (
        api,
        container_base,
        container_lifecycle,
        container_resources,
        container_rows,
        rpcapi,
    )
    from zun.runtime.docker import driver

    def insert_uuid(_self: Any, _ctx: Any, values: dict[str, Any], *_a: Any, **_k: Any) -> str:
        return values.get("uuid")

    _wrap(
        api.ContainerAPI,
        "_insert_and_schedule",
        "api: quota + insert + schedule + claim",
        insert_uuid,
    )
    _wrap(
        rpcapi.ContainerRPCAPI,
        "container_create",
        "api: cast",
        lambda _s, _c, _h, uuid, *a, **k: uuid,
    )
    _wrap(
        container_lifecycle.ContainerLifecycle,
        "_do_create",
        "node: whole create",
        lambda _s, _c, uuid, *a, **k: uuid,
    )
    base = container_base.ContainerNodeBase
    _wrap(base, "_pull", "node: image check", _row_uuid)
    _wrap(container_resources.NodeResources, "prepare_volumes", "node: volumes", _row_uuid)
    _wrap(base, "_create_engine_container", "node: network + docker create", _row_uuid)
    _wrap(driver.DockerDriver, "create", "node: docker create", _row_uuid)
    _wrap(driver.DockerDriver, "start", "node: docker start", _row_uuid)
    _wrap(base, "engine_fields", "node: inspect", _row_uuid)
    _wrap(container_rows, "finish", "node: status write", lambda _c, uuid, *a, **k: uuid)


if __name__ == "__main__":
    install()
    from zun.cmd.all import main

    sys.exit(main(["zun-all", *sys.argv[1:]]))
