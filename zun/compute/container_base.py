"""What the container handlers of a node share: the runtime, the job pool, images, resources.

Arguments are container UUIDs (never objects): each handler loads the row itself. Casts hand
their work to a bounded pool keyed by container UUID (:class:`KeyedExecutor`), so the RPC
server's thread is free at once and the actions on one container run one at a time, in the
order they arrived. Calls run in the RPC thread and answer the API directly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zun.common import consts, exception
from zun.common.context import RequestContext
from zun.compute import container_rows as rows
from zun.compute.container_resources import NodeResources, Taken
from zun.compute.node_plumbing import NodePlumbing
from zun.conf import CONF
from zun.db import engine
from zun.db.queries import node as node_q
from zun.image.service import ImageService
from zun.runtime.contract import ContainerRuntime
from zun.runtime.docker import spec as spec_mod
from zun.runtime.docker.client import is_not_found

LOG = logging.getLogger(__name__)

LABEL_HOST = "zun.host"


class ContainerNodeBase(NodePlumbing):
    """The state the container handlers of one host share."""

    def __init__(
        self,
        host: str,
        driver: ContainerRuntime | None = None,
        state_dir: str | Path | None = None,
        max_workers: int | None = None,
    ) -> None:
        super().__init__(host, driver, state_dir, max_workers, "zun-compute")
        self.images = ImageService(host, lambda: self.driver.client)
        self.resources = NodeResources(host, lambda: self.driver.engine, lambda: self.state_dir)

    # --- plumbing -------------------------------------------------------------------------

    def submit(
        self, context: RequestContext, container_uuid: str, fn: Callable[..., None], *args: Any
    ) -> Any:
        """Queue ``fn(context, container_uuid, *args)`` behind the container's other jobs."""
        return self.workers.submit(
            container_uuid, self._run_job, context, container_uuid, fn, *args
        )

    @staticmethod
    def _run_job(
        context: RequestContext, container_uuid: str, fn: Callable[..., None], *args: Any
    ) -> None:
        # Log lines of this thread carry the request id of the API request.
        context.update_store()
        try:
            fn(context, container_uuid, *args)
        except Exception:
            LOG.exception("%s of container %s failed", fn.__name__, container_uuid)

    def engine_fields(self, row: Any, info: dict[str, Any] | None = None) -> dict[str, Any]:
        return rows.engine_fields(self.driver, row, info)

    # --- image ----------------------------------------------------------------------------

    def _pull(
        self,
        row: Any,
        image: str | None = None,
        driver_name: str | None = None,
        on_pull: Callable[[], None] | None = None,
    ) -> str:
        """Make the row's image present as its pull policy says; returns the engine ref.

        ``on_pull`` runs before an actual pull (the create sets task image_pulling then)."""
        driver_name = driver_name or row.image_driver or CONF.default_image_driver
        registry = None
        if row.registry_id and driver_name == consts.IMAGE_DRIVER_DOCKER:
            with engine.transaction(readonly=True) as session:
                registry = node_q.get_registry(session, row.registry_id)
            if registry is None:
                raise exception.RegistryNotFound(registry=row.registry_id)
        return self.images.pull_for(
            image or row.image,
            policy=row.image_pull_policy,
            project_id=row.project_id,
            user_id=row.user_id,
            registry=registry,
            driver_name=driver_name,
            on_pull=on_pull,
        )

    # --- the engine container -------------------------------------------------------------

    def _create_engine_container(
        self,
        row: Any,
        image_ref: str,
        requested_networks: list[dict[str, Any]] | None,
        mounts: list[Any],
        taken: Taken,
    ) -> None:
        spec_row = row.as_dict()
        # The host label lets the reaper of each node tell its own orphans from others'.
        spec_row["labels"] = {**(row.labels or {}), LABEL_HOST: self.host}
        try:
            with self.resources.networking(row, requested_networks, taken) as networking:
                self.driver.create(spec_row, image_ref, networking, mounts=mounts or None)
        except exception.ZunException as exc:
            if requested_networks or not is_not_found(exc):
                raise
            self.resources.forget_project_network(row.project_id)
            with self.resources.networking(row, requested_networks, taken) as networking:
                self.driver.create(spec_row, image_ref, networking, mounts=mounts or None)
        taken.engine_created = True
        row.container_id = spec_mod.engine_name(row.uuid)

    def _start_and_inspect(self, row: Any, run: bool) -> dict[str, Any]:
        if run:
            self.driver.start(row)
        try:
            values = self.engine_fields(row)
        except exception.ZunException as exc:
            if not (run and row.auto_remove and is_not_found(exc)):
                raise
            # It ran, exited and the engine removed it already, as asked.
            values = {
                "status": consts.DELETED,
                "status_detail": None,
                "addresses": {},
                "container_id": row.container_id,
            }
        if run:
            values["started_at"] = node_q.now()
        return values
