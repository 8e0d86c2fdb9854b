"""What a test's zun node left on the machine's Docker engine, for the in-process agent of
``functional/api/resources_support.py`` and the zun-all processes of ``e2e/``.

A delete is a cast: the API answers 204 before the node has done anything. A test that deletes
waits with :func:`wait_deleted` until the API answers 404 *and* no engine container carries the
label; the fixtures end with :func:`require_host_empty`, so that a delete that was refused or
never waited for fails the run instead of leaving ``sleep`` containers for the session's sweep.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest


def engine_containers(docker_client: Any, label: str) -> list[Any]:
    """The engine containers carrying ``label`` (``key=value``), stopped ones too."""
    return docker_client.containers.list(ignore_removed=True, all=True, filters={"label": label})


def describe(container: Any) -> str:
    """One line naming an engine container (name, status, image, zun UUID)."""
    labels = container.labels
    return (
        f"{container.name} ({container.status}, image {container.attrs['Config']['Image']}, "
        f"uuid {labels.get('zun.container.uuid') or labels.get('zun.capsule.uuid')})"
    )


def wait_deleted(
    docker_client: Any,
    label: str,
    answers_404: Callable[[], bool],
    *,
    what: str,
    timeout: float = 60.0,
) -> None:
    """Poll until ``answers_404()`` and no engine container carries ``label``; an
    AssertionError naming what is left when ``timeout`` passes first."""
    deadline = time.monotonic() + timeout
    while True:
        api_gone = answers_404()
        left = engine_containers(docker_client, label)
        if api_gone and not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{what} not deleted within {timeout:g} s: API "
                f"{'404' if api_gone else 'still shows it'}, engine containers: "
                f"{'; '.join(describe(c) for c in left) or 'none'}"
            )
        time.sleep(0.2)


def sweep_host(docker_client: Any, host: str) -> list[str]:
    """Remove the engine containers labelled ``zun.host=<host>``; returns a line for each."""
    left = []
    for container in engine_containers(docker_client, f"zun.host={host}"):
        left.append(describe(container))
        container.remove(force=True, v=True)
    return left


def require_host_empty(docker_client: Any, host: str) -> None:
    """Fail when engine containers of ``host`` remain, listing them (removed first)."""
    left = sweep_host(docker_client, host)
    if left:
        pytest.fail(
            f"engine containers of host {host} were left after the test "
            f"(now removed): {'; '.join(left)}",
            pytrace=False,
        )
