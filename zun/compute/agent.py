"""zun-compute as a component: RPC server, start-up recovery, periodic tasks, heartbeat.

The endpoint objects come from :func:`endpoints_for`, so each resource (containers, images,
networks) keeps its node-side handlers in its own module.
"""

from __future__ import annotations

import functools
import importlib
import logging
from typing import Any

from zun.common import context as zun_context
from zun.common import rpc
from zun.common.rpc_service import RPCService
from zun.compute.periodic import PeriodicRunner
from zun.conf import CONF
from zun.db.queries import service_heartbeat

LOG = logging.getLogger(__name__)

BINARY = "zun-compute"

# Modules that may define ``build_endpoint(host) -> object``; absent ones are skipped so the
# agent runs with whatever node-side handlers this build has.
_ENDPOINT_MODULES = (
    "zun.compute.capsule_endpoint",  # first: its start-up recovery settles capsule rows
    "zun.compute.manager",
    "zun.compute.image_endpoint",
    "zun.compute.network_endpoint",
    "zun.console.endpoint",
)


def endpoints_for(host: str) -> list[Any]:
    endpoints: list[Any] = [HealthEndpoint(host)]
    for name in _ENDPOINT_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        build = getattr(module, "build_endpoint", None)
        if build is not None:
            endpoints.append(build(host))
    return endpoints


class HealthEndpoint:
    """Answers ``ping``: lets an operator or a test check that a node's agent is reachable."""

    def __init__(self, host: str) -> None:
        self.host = host

    def ping(self, context: Any) -> dict[str, str]:
        return {"host": self.host, "binary": BINARY}


class ComputeAgent:
    name = "zun-compute"

    def __init__(self, host: str | None = None) -> None:
        self.host = host or CONF.host
        self.endpoints = endpoints_for(self.host)
        self.rpc = RPCService(self.host, self.endpoints, serializer=rpc.get_serializer())
        self.periodic = PeriodicRunner()
        self.periodic.add("heartbeat", self.heartbeat, spacing=self._heartbeat_spacing())
        admin = zun_context.get_admin_context()
        for endpoint in self.endpoints:
            tasks = getattr(endpoint, "periodic_tasks", None)
            if tasks is None:
                continue
            # Each task is (callable(context), spacing in seconds, run at start-up?).
            for func, spacing, run_immediately in tasks():
                self.periodic.add(getattr(func, "__name__", repr(func)),
                                  functools.partial(func, admin), spacing, run_immediately)

    @staticmethod
    def _heartbeat_spacing() -> float:
        # A node counts as down after service_down_time; beat well within it.
        return float(max(1, min(CONF.periodic_interval_max, CONF.service_down_time // 3)))

    def heartbeat(self) -> None:
        service_heartbeat.report_up(self.host, BINARY, CONF.default_availability_zone)

    def start(self) -> None:
        self.heartbeat()
        admin = zun_context.get_admin_context()
        for endpoint in self.endpoints:
            init_host = getattr(endpoint, "init_host", None)
            if init_host is not None:
                init_host(admin)
        self.rpc.start()
        self.periodic.start()
        LOG.info("zun-compute running on host %s", self.host)

    def stop(self) -> None:
        self.periodic.stop()
        self.rpc.stop()
        self.rpc.wait()
        for endpoint in self.endpoints:
            cleanup = getattr(endpoint, "cleanup_host", None)
            if cleanup is not None:
                cleanup()
