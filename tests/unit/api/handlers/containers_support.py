"""Support for the container API tests: a real oslo.messaging server that records messages.

The node side (``zun.compute.manager``) is another component; these tests check what the API
sends. :class:`RecordingNode` is a genuine RPC endpoint served by an oslo.messaging server on
the ``fake://`` (in-process) transport, listening on ``zun-compute.<host>`` exactly as a node
does: casts and calls really cross the bus, with the context serializer of the real service.
Calls answer with canned values (``node.replies[method]``), or raise what
``node.failures[method]`` holds, so the API's remote-error handling is exercised for real.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from zun.common import rpc
from zun.common.rpc_service import RPCService
from zun.compute import rpcapi as rpcapi_mod

CASTS = ("container_create", "container_delete", "container_start", "container_stop",
         "container_reboot", "container_pause", "container_unpause", "container_kill",
         "container_rebuild", "resize_container", "network_attach", "network_detach",
         "container_commit")
CALLS = ("container_show", "container_logs", "container_exec", "container_exec_resize",
         "container_attach", "container_resize", "container_top", "container_get_archive",
         "container_put_archive", "container_stats", "container_update", "network_list")


@dataclass
class Message:
    method: str
    kwargs: dict[str, Any]
    context: dict[str, Any]


@dataclass
class RecordingNode:
    host: str
    messages: list[Message] = field(default_factory=list)
    replies: dict[str, Any] = field(default_factory=dict)
    failures: dict[str, BaseException] = field(default_factory=dict)
    _arrived: threading.Condition = field(default_factory=threading.Condition)

    def _record(self, method: str, ctxt: Any, kwargs: dict[str, Any]) -> Any:
        with self._arrived:
            self.messages.append(Message(method, kwargs, ctxt.to_dict()))
            self._arrived.notify_all()
        if method in self.failures:
            raise self.failures[method]
        return self.replies.get(method)

    def wait_for(self, method: str, count: int = 1, timeout: float = 10.0) -> list[Message]:
        """The messages of ``method`` once ``count`` of them arrived (casts are async)."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                found = [m for m in self.messages if m.method == method]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{method} x{count} not received by {self.host}; "
                                         f"got {[m.method for m in self.messages]}")
                self._arrived.wait(left)

    def methods(self) -> list[str]:
        return [m.method for m in self.messages]


def _endpoint_method(name: str) -> Any:
    def method(self: RecordingNode, ctxt: Any, **kwargs: Any) -> Any:
        return self._record(name, ctxt, kwargs)

    method.__name__ = name
    return method


for _name in CASTS + CALLS:
    setattr(RecordingNode, _name, _endpoint_method(_name))
# oslo.messaging reads ``target`` from an endpoint; a dataclass must not expose one by accident.
RecordingNode.target = None  # type: ignore[attr-defined]


class Nodes:
    """Start recording nodes on the bus (``nodes.start("node1")``); stopped at teardown."""

    def __init__(self) -> None:
        self._services: list[RPCService] = []
        self.by_host: dict[str, RecordingNode] = {}

    def start(self, host: str) -> RecordingNode:
        node = RecordingNode(host)
        service = RPCService(host, [node])
        service.start()
        self._services.append(service)
        self.by_host[host] = node
        return node

    def stop(self) -> None:
        for service in self._services:
            service.stop()
            service.wait()


@pytest.fixture
def bus() -> Iterator[None]:
    """The in-process transport, as zun-all uses it."""
    from unit.api.apptesting import init_config

    from zun.conf import CONF

    init_config()
    rpc.init(CONF, "fake://")
    yield
    rpc.cleanup()


@pytest.fixture
def nodes(bus: None) -> Iterator[Nodes]:
    started = Nodes()
    yield started
    started.stop()


def fresh_rpcapi() -> None:
    """Forget the cached client (a new transport per test)."""
    rpcapi_mod._CLIENT = None
