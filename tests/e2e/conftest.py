"""End-to-end fixtures (see e2e/support.py for the helpers).

  zun_all   a running zun-all for the session (its own host name, ports and state dir)
  zun       a python-zunclient Client at 1.40 on it (noauth: admin of project 'default')

At the end of every module, and again before the session's sweep, the engine containers of
the session's zun-all host must be gone: any left fail the run, listed by name, status, image
and UUID (``require_nothing_left``). Tests delete with ``support.delete_container`` (or
``wait_gone`` after a zunclient delete), which waits until the node has really removed them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

_TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

from e2e.support import ZunAll, require_nothing_left, sweep  # noqa: E402

# The session's zun-all once started, with its engine client: the module guard below checks
# it without requesting the fixture (which would start a zun-all for modules that use none).
_STARTED: list[tuple[ZunAll, Any]] = []


@pytest.fixture(scope="session")
def zun_all(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, busybox_image: str
) -> Iterator[ZunAll]:
    server = ZunAll(tmp_path_factory.mktemp("zun-all")).start()
    _STARTED.append((server, docker_client))
    try:
        yield server
    finally:
        try:
            require_nothing_left(server, docker_client)
        finally:
            _STARTED.remove((server, docker_client))
            server.stop()
            sweep(docker_client, server.host)


@pytest.fixture(scope="module", autouse=True)
def nothing_left_on_zun_all() -> Iterator[None]:
    """Fails the module's last test at teardown when the module left engine containers on
    the session's zun-all host: autouse, so it is torn down after the module's own fixtures
    (their clean-up deletes included)."""
    yield
    for server, docker_client in list(_STARTED):
        require_nothing_left(server, docker_client)


@pytest.fixture
def zun(zun_all: ZunAll) -> Any:
    return zun_all.client()
