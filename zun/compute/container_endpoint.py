"""The node side of containers: ``ContainerEndpoint``, served by zun-compute.

One object for the RPC server, its methods grouped by concern in the classes it is made of:
life-cycle casts (:mod:`zun.compute.container_lifecycle`), changes to a container
(:mod:`zun.compute.container_changes`) and calls (:mod:`zun.compute.container_calls`), over
the shared runtime, job pool, images and resources (:mod:`zun.compute.container_base`).
Start-up recovery and the periodic tasks are :mod:`zun.compute.recovery` and
:mod:`zun.compute.periodic_tasks`, which drive it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from zun.common.context import RequestContext
from zun.compute import periodic_tasks, recovery
from zun.compute.container_calls import ContainerCalls
from zun.compute.container_changes import ContainerChanges
from zun.compute.container_lifecycle import ContainerLifecycle

LOG = logging.getLogger(__name__)


class ContainerEndpoint(ContainerLifecycle, ContainerChanges, ContainerCalls):
    """RPC endpoint for container methods on one host (see containers-contract.md)."""

    def init_host(self, context: RequestContext) -> None:
        """Start-up: report the node's inventory, then recover interrupted work."""
        try:
            periodic_tasks.update_inventory(self, context)
        except Exception:
            LOG.exception("Initial inventory of %s failed", self.host)
        try:
            periodic_tasks.sync_placement(self, context)
        except Exception:
            LOG.exception(
                "Reporting %s to Placement failed; retried every "
                "[compute]/resource_provider_association_refresh",
                self.host,
            )
        recovery.recover(self, context)

    def periodic_tasks(self) -> list[tuple[Callable[[RequestContext], None], float, bool]]:
        return periodic_tasks.tasks_for(self)


def build_endpoint(host: str) -> ContainerEndpoint:
    """The object zun-compute serves for container methods (see zun.compute.agent)."""
    return ContainerEndpoint(host)
