"""Container life-cycle casts of a node: create, delete, start, stop, reboot, pause, unpause,
kill, rebuild.

Each ends with ONE conditional UPDATE that writes the final status and clears the task state
it started from, and finishes the action's event (:mod:`zun.compute.container_rows`). A
failed create releases what it took -- engine container, volumes Zun made, the project
network when nothing else uses it, the host claim -- and leaves the row in ``Error`` with the
reason, without a host: nothing of it is left on the node.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
from collections.abc import Callable
from typing import Any

from zun.common import consts, exception
from zun.common.context import RequestContext
from zun.compute import container_rows as rows
from zun.compute import relocation
from zun.compute.container_base import ContainerNodeBase
from zun.compute.container_resources import Taken
from zun.compute.container_rows import reason_of
from zun.db import engine
from zun.db.queries import containers as container_q
from zun.db.queries import node as node_q
from zun.network import access as network_access
from zun.runtime.docker import health
from zun.runtime.docker.client import is_not_found
from zun.scheduler import claims, placement

LOG = logging.getLogger(__name__)

DELETE_STOP_TIMEOUT = 10
# How long a kill waits for the process to be gone before reading the state back.
KILL_SETTLE_SECONDS = 2


class ContainerLifecycle(ContainerNodeBase):
    """The life-cycle casts (each queued behind the container's other jobs)."""

    # --- create ---------------------------------------------------------------------------

    def container_create(
        self,
        context: RequestContext,
        container_uuid: str,
        run: bool = False,
        requested_networks: list[dict[str, Any]] | None = None,
        requested_volumes: list[dict[str, Any]] | None = None,
    ) -> None:
        self.submit(
            context,
            container_uuid,
            self._do_create,
            bool(run),
            list(requested_networks or []),
            list(requested_volumes or []),
        )

    def _do_create(
        self,
        context: RequestContext,
        container_uuid: str,
        run: bool,
        requested_networks: list[dict[str, Any]],
        requested_volumes: list[dict[str, Any]],
    ) -> None:
        row = rows.load(container_uuid)
        if row is None or row.status != consts.CREATING:
            LOG.info(
                "Not creating container %s: it is %s",
                container_uuid,
                "gone" if row is None else row.status,
            )
            return
        if row.host != self.host:
            # Moved to another host while this one was down; the message was still queued.
            LOG.info(
                "Not creating container %s: it now belongs to host %s", container_uuid, row.host
            )
            return
        taken = Taken()
        started = node_q.now()
        try:
            pulling: list[bool] = []

            def on_pull() -> None:
                pulling.append(True)
                rows.set_task(
                    container_uuid, consts.IMAGE_PULLING, consts.CONTAINER_CREATING, host=self.host
                )

            image_ref = self._pull(row, on_pull=on_pull)
            if pulling:
                rows.set_task(
                    container_uuid, consts.CONTAINER_CREATING, consts.IMAGE_PULLING, host=self.host
                )
            network_access.check_joinable(
                context.is_admin, row.project_id, [n.get("network") for n in requested_networks]
            )
            mounts = self.resources.prepare_volumes(row, requested_volumes, taken)
            self._create_engine_container(row, image_ref, requested_networks, mounts, taken)
            values = self._start_and_inspect(row, run)
        except Exception as exc:
            LOG.warning("Creating container %s failed: %s", container_uuid, reason_of(exc))
            if self._moved_elsewhere(row, taken, exc):
                return
            self.fail_create(context, row, reason_of(exc), taken, exc, started)
            return
        values.update(taken.row_values)
        values.update(task_state=None, status_reason=None)
        if not rows.finish(
            context,
            container_uuid,
            "create",
            values,
            (consts.CONTAINER_CREATING,),
            statuses=(consts.CREATING,),
            started=started,
            host=self.host,
        ):
            self._after_lost_create(row, taken)
            return
        LOG.info("Container %s created: %s", container_uuid, values["status"])

    def _moved_elsewhere(self, row: Any, taken: Taken, exc: BaseException) -> bool:
        """A create that failed for this node's sake (its engine is unreachable) goes to
        another host while attempts remain (zun.compute.relocation); True when it is no
        longer this node's to fail."""
        if relocation.max_attempts() <= 1 or not health.engine_failure(exc):
            return False
        row.container_id = None  # remove the engine container by its name, if any
        self._undo(row, taken)
        try:
            target = relocation.move(
                row.uuid, self.host, f"its container engine failed: {reason_of(exc)}"
            )
        except exception.PlacementUnavailable as down:
            # Not left Creating here: the caller fails the create (Error, claim released).
            LOG.warning("Container %s: create not moved: %s", row.uuid, down)
            return False
        LOG.warning(
            "Container %s: create %s",
            row.uuid,
            f"moved to {target}" if target else "not moved (see its status)",
        )
        return True

    def _after_lost_create(self, row: Any, taken: Taken) -> None:
        """The row changed under the create: a forced delete is queued (it cleans up), the
        row is gone, or it was moved to another host while this node stalled (the API's node
        monitor, an evacuation). In the last two cases nothing may stay on this node."""
        current = rows.load(row.uuid)
        if current is None:
            LOG.info("Container %s was deleted while being created; removing it", row.uuid)
            self._undo(row, taken)
            placement.release(row.uuid)
            return
        if current.host != self.host:
            # Its claim and allocation now belong to the new host: only what this node made
            # goes.
            LOG.warning(
                "Container %s was moved to host %s while this node created it; "
                "removing the engine container made here",
                row.uuid,
                current.host,
            )
            self._undo(row, taken, only_mine=True)

    def _undo(self, row: Any, taken: Taken, only_mine: bool = False) -> None:
        """Give back the node-side things a create took (never raises). ``only_mine``: only
        the volume records of this host go (the row may live on another host by now, whose
        records are not this node's to delete)."""
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("engine container", lambda: self.driver.delete(row, force=True)),
            ("volumes", lambda: self.resources.release_volumes(row.uuid, taken.records)),
            # after the engine container: the engine lets go of a port only when it is gone
            ("Neutron ports", lambda: self.resources.release_neutron(row, taken)),
        ]
        for what, step in steps:
            try:
                step()
            except Exception:
                LOG.warning("Could not release the %s of %s", what, row.uuid, exc_info=True)
        with contextlib.suppress(Exception):
            with engine.transaction() as session:
                node_q.delete_volume_records(
                    session, row.uuid, host=self.host if only_mine else None
                )
        self.resources.release_project_network(row.project_id)

    def fail_create(
        self,
        context: RequestContext,
        row: Any,
        reason: str,
        taken: Taken | None = None,
        exc: BaseException | None = None,
        started: datetime.datetime | None = None,
    ) -> None:
        """Error state for a create that cannot complete; the node keeps nothing of it."""
        taken = taken or Taken()
        row.container_id = None  # remove the engine container by its name
        self._undo(row, taken, only_mine=True)
        cpu, memory_mb, disk_gb = claims.container_resources(row.cpu, row.memory, row.disk)
        host = row.host

        def release(session: Any) -> None:
            if host:
                claims.release(session, host, cpu, memory_mb, disk_gb)
            placement.release_after_commit(session, row.uuid)

        values = {
            "status": consts.ERROR,
            "status_reason": reason,
            "task_state": None,
            "host": None,
            "container_id": None,
            "status_detail": None,
            "addresses": None,
        }
        rows.finish(
            context,
            row.uuid,
            "create",
            values,
            (consts.CONTAINER_CREATING, consts.IMAGE_PULLING, None),
            exc=exc or exception.ZunException(message=reason),
            statuses=(consts.CREATING,),
            extra=release,
            started=started or node_q.now(),
            host=self.host,
        )

    # --- delete ---------------------------------------------------------------------------

    def container_delete(
        self,
        context: RequestContext,
        container_uuid: str,
        force: bool = False,
        stop_first: bool = False,
    ) -> None:
        self.submit(context, container_uuid, self._do_delete, bool(force), bool(stop_first))

    def _do_delete(
        self, context: RequestContext, container_uuid: str, force: bool, stop_first: bool
    ) -> None:
        row = rows.load(container_uuid)
        if row is None:
            return
        rows.start_event(context, container_uuid, "delete", host=self.host)
        try:
            if stop_first:
                try:
                    self.driver.stop(row, DELETE_STOP_TIMEOUT)
                except exception.ZunException as exc:
                    if not is_not_found(exc) and not force:
                        raise
            self.driver.delete(row, force=force or stop_first)
            self.resources.release_stored_volumes(container_uuid)
            if not force:
                # Neutron not answering fails the delete (Error, retry later) rather than
                # forgetting the container's ports.
                self.resources.release_container_networking(row, strict=True)
        except Exception as exc:
            if not force:
                LOG.warning("Deleting container %s failed: %s", container_uuid, reason_of(exc))
                rows.finish(
                    context,
                    container_uuid,
                    "delete",
                    {"status": consts.ERROR, "status_reason": reason_of(exc), "task_state": None},
                    (consts.CONTAINER_DELETING, None),
                    exc=exc,
                    host=self.host,
                )
                return
            LOG.warning("Forced delete of %s goes on despite: %s", container_uuid, reason_of(exc))
        if force:
            self.resources.release_container_networking(row)
        self._forget(row, container_uuid)

    @engine.retry_on_deadlock
    def _forget(self, row: Any, container_uuid: str) -> None:
        """The deleted container's row, claim and volume records go, in one transaction
        (again on a deadlock: a lost write would leave the row in Deleting for ever)."""
        cpu, memory_mb, disk_gb = claims.container_resources(row.cpu, row.memory, row.disk)
        with engine.transaction() as session:
            current = node_q.get_container(session, container_uuid)
            if current is None:
                return
            if current.host not in (None, self.host):
                # Moved to another host (evacuated) while the delete was queued here: only
                # this node's engine container was this delete's to remove.
                return
            if current.host:
                claims.release(session, current.host, cpu, memory_mb, disk_gb)
            node_q.delete_volume_records(session, container_uuid)
            container_q.destroy(session, container_uuid)
            placement.release_after_commit(session, container_uuid)

    # --- lifecycle actions ----------------------------------------------------------------

    def _action(
        self,
        context: RequestContext,
        container_uuid: str,
        action: str,
        task_state: str,
        work: Callable[[Any], None],
        error_on_failure: bool,
    ) -> None:
        """Run ``work(row)``, then write the engine's view of the container.

        On failure the status becomes Error (start, rebuild) or is read back from the engine
        (the others), the task state is cleared and the event records the error.
        """
        row = rows.load(container_uuid)
        if row is None:
            return
        rows.start_event(context, container_uuid, action, host=self.host)
        try:
            work(row)
            values = self.engine_fields(row)
        except Exception as exc:
            LOG.warning("%s of container %s failed: %s", action, container_uuid, reason_of(exc))
            values = {}
            if error_on_failure:
                values = {"status": consts.ERROR, "status_reason": reason_of(exc)}
            else:
                with contextlib.suppress(Exception):
                    values = self.engine_fields(row)
            values["task_state"] = None
            rows.finish(
                context, container_uuid, action, values, (task_state, None), exc=exc, host=self.host
            )
            return
        values["task_state"] = None
        if error_on_failure:
            values["status_reason"] = None
        rows.finish(context, container_uuid, action, values, (task_state, None), host=self.host)

    def container_start(self, context: RequestContext, container_uuid: str) -> None:
        self.submit(context, container_uuid, self._do_start)

    def _do_start(self, context: RequestContext, container_uuid: str) -> None:
        self._action(
            context,
            container_uuid,
            "start",
            consts.CONTAINER_STARTING,
            self.driver.start,
            error_on_failure=True,
        )

    def container_stop(
        self, context: RequestContext, container_uuid: str, timeout: int | None = None
    ) -> None:
        self.submit(context, container_uuid, self._do_stop, timeout)

    def _do_stop(
        self, context: RequestContext, container_uuid: str, timeout: int | None = None
    ) -> None:
        self._action(
            context,
            container_uuid,
            "stop",
            consts.CONTAINER_STOPPING,
            lambda row: self.driver.stop(row, timeout),
            error_on_failure=False,
        )

    def container_reboot(
        self, context: RequestContext, container_uuid: str, timeout: int | None = None
    ) -> None:
        self.submit(context, container_uuid, self._do_reboot, timeout)

    def _do_reboot(
        self, context: RequestContext, container_uuid: str, timeout: int | None = None
    ) -> None:
        self._action(
            context,
            container_uuid,
            "reboot",
            consts.CONTAINER_REBOOTING,
            lambda row: self.driver.reboot(row, timeout),
            error_on_failure=False,
        )

    def container_pause(self, context: RequestContext, container_uuid: str) -> None:
        self.submit(context, container_uuid, self._do_pause)

    def _do_pause(self, context: RequestContext, container_uuid: str) -> None:
        self._action(
            context,
            container_uuid,
            "pause",
            consts.CONTAINER_PAUSING,
            self.driver.pause,
            error_on_failure=False,
        )

    def container_unpause(self, context: RequestContext, container_uuid: str) -> None:
        self.submit(context, container_uuid, self._do_unpause)

    def _do_unpause(self, context: RequestContext, container_uuid: str) -> None:
        self._action(
            context,
            container_uuid,
            "unpause",
            consts.CONTAINER_UNPAUSING,
            self.driver.unpause,
            error_on_failure=False,
        )

    def container_kill(
        self, context: RequestContext, container_uuid: str, signal: str | None = None
    ) -> None:
        self.submit(context, container_uuid, self._do_kill, signal)

    def _do_kill(
        self, context: RequestContext, container_uuid: str, signal: str | None = None
    ) -> None:
        def work(row: Any) -> None:
            self.driver.kill(row, signal)
            # The signal is delivered asynchronously: give the process a moment to end so
            # the status read back is the result of the kill, not the instant before it.
            with contextlib.suppress(exception.ZunException):
                self.driver.wait_stopped(row, KILL_SETTLE_SECONDS)

        self._action(
            context, container_uuid, "kill", consts.CONTAINER_KILLING, work, error_on_failure=False
        )

    # --- rebuild --------------------------------------------------------------------------

    def container_rebuild(
        self,
        context: RequestContext,
        container_uuid: str,
        run: bool | None = None,
        image: str | None = None,
        image_driver: str | None = None,
    ) -> None:
        self.submit(context, container_uuid, self._do_rebuild, run, image, image_driver)

    def _do_rebuild(
        self,
        context: RequestContext,
        container_uuid: str,
        run: bool | None,
        image: str | None,
        image_driver_name: str | None,
    ) -> None:
        """Replace the engine container with a new one from (possibly) a new image; the
        UUID, name, networks and volumes stay."""
        row = rows.load(container_uuid)
        if row is None:
            return
        rows.start_event(context, container_uuid, "rebuild", host=self.host)
        task = (consts.CONTAINER_REBUILDING, None)
        try:
            image_ref = self._pull(row, image, image_driver_name)
            self.driver.delete(row, force=True)
            mounts = self.resources.stored_mounts(container_uuid)
            row.container_id = None
            self._create_engine_container(
                row, image_ref, self.resources.stored_networks(row), mounts, Taken()
            )
            row.status = consts.CREATING  # the mapping reads "Created" for a new container
            values = self._start_and_inspect(row, bool(run))
        except Exception as exc:
            LOG.warning("Rebuilding container %s failed: %s", container_uuid, reason_of(exc))
            rows.finish(
                context,
                container_uuid,
                "rebuild",
                {"status": consts.ERROR, "status_reason": reason_of(exc), "task_state": None},
                task,
                exc=exc,
                host=self.host,
            )
            return
        values.update(task_state=None, status_reason=None)
        if image:
            values["image"] = image
        if image_driver_name:
            values["image_driver"] = image_driver_name
        rows.finish(context, container_uuid, "rebuild", values, task, host=self.host)
