"""zun-compute as a component: RPC server, start-up recovery, periodic tasks, heartbeat.

The endpoint objects come from :func:`endpoints_for`, so each resource (capsules, containers,
images, networks, consoles) keeps its node-side handlers in its own module.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from zun.common import context as zun_context
from zun.common import rpc
from zun.common.rpc_service import RPCService
from zun.compute import capsule_endpoint, container_endpoint, image_endpoint, network_endpoint
from zun.compute.periodic import PeriodicRunner
from zun.conf import CONF
from zun.console import endpoint as console_endpoint
from zun.db.queries import service_heartbeat
from zun.runtime.docker import health

LOG = logging.getLogger(__name__)

BINARY = "zun-compute"


def endpoints_for(host: str) -> list[Any]:
    """The node's RPC endpoints; capsules first, so their start-up recovery settles capsule
    rows before the container endpoint's recovery reads the host's rows."""
    return [
        HealthEndpoint(host),
        capsule_endpoint.build_endpoint(host),
        container_endpoint.build_endpoint(host),
        image_endpoint.build_endpoint(host),
        network_endpoint.build_endpoint(host),
        console_endpoint.build_endpoint(host),
    ]


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
        # The heartbeat has a thread of its own: a slow sync or a hung engine call in the
        # other tasks must never make a live node look dead.
        self.beat = PeriodicRunner(name="zun-heartbeat")
        self.beat.add("heartbeat", self.heartbeat, spacing=self._heartbeat_spacing())
        self.engine_error: str | None = None
        admin = zun_context.get_admin_context()
        for endpoint in self.endpoints:
            tasks = getattr(endpoint, "periodic_tasks", None)
            if tasks is None:
                continue
            # Each task is (callable(context), spacing in seconds, run at start-up?).
            for func, spacing, run_immediately in tasks():
                self.periodic.add(
                    getattr(func, "__name__", repr(func)),
                    functools.partial(func, admin),
                    spacing,
                    run_immediately,
                )

    @staticmethod
    def _heartbeat_spacing() -> float:
        # A node counts as down after service_down_time; beat at least three times within it.
        return float(max(1, min(CONF.report_interval, CONF.service_down_time // 3)))

    def heartbeat(self) -> None:
        error = health.probe()
        if error != self.engine_error:
            if error:
                LOG.warning("Host %s takes no new work: %s", self.host, error)
            else:
                LOG.info("Host %s: the container engine answers again", self.host)
            self.engine_error = error
        service_heartbeat.report_up(
            self.host,
            BINARY,
            CONF.default_availability_zone,
            engine_checked=True,
            engine_error=error,
        )

    def start(self) -> None:
        self.heartbeat()
        admin = zun_context.get_admin_context()
        for endpoint in self.endpoints:
            init_host = getattr(endpoint, "init_host", None)
            if init_host is not None:
                init_host(admin)
        self.rpc.start()
        self.beat.start()
        self.periodic.start()
        LOG.info("zun-compute running on host %s", self.host)

    def stop(self) -> None:
        self.beat.stop()
        self.periodic.stop()
        self.rpc.stop()
        self.rpc.wait()
        for endpoint in self.endpoints:
            cleanup = getattr(endpoint, "cleanup_host", None)
            if cleanup is not None:
                cleanup()
