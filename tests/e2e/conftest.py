"""End-to-end fixtures (see e2e/support.py for the helpers).

  zun_all   a running zun-all for the session (its own host name, ports and state dir)
  zun       a python-zunclient Client at 1.40 on it (noauth: admin of project 'default')
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

from e2e.support import ZunAll, sweep  # noqa: E402


@pytest.fixture(scope="session")
def zun_all(tmp_path_factory: pytest.TempPathFactory, docker_client: Any,
            busybox_image: str) -> Iterator[ZunAll]:
    server = ZunAll(tmp_path_factory.mktemp("zun-all")).start()
    try:
        yield server
    finally:
        server.stop()
        sweep(docker_client, server.host)


@pytest.fixture
def zun(zun_all: ZunAll) -> Any:
    return zun_all.client()
