"""The API side of container operations: state checks, quota, scheduling, audit, RPC.

Every request that changes a container leaves a persisted, explainable state:

* create: ONE transaction enforces the quota, inserts the row (``Creating``), claims resources
  atomically on one host and records the ``create`` action; the cast follows. No host: the
  row goes to ``Error`` "There are not enough hosts available." (202, as in Zun). Any later
  failure (scheduler bug, bus down) puts the row in ``Error`` with the reason and no claim.
  Quota usage is derived from rows, as in Zun, so an ``Error`` row keeps counting until it is
  deleted.
* actions sent to a node (casts): the host must be up, then ONE conditional UPDATE sets
  ``task_state`` (compare-and-swap: the status must allow the action and no other action may
  be under way), the action is recorded, and the cast is sent. Two concurrent requests: one
  wins, the other gets 409. If the cast cannot be sent, the task state is put back.
* calls: the host must be up; the call waits a bounded time.

Lost races are answered with Zun's 409 ``InvalidStateException``: "Cannot <action> container
<uuid> in <Status> state", plus " (another action is in progress)" when the status allowed the
action but a task was already running.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from oslo_db import exception as db_exc
from oslo_utils import uuidutils

from zun.common import consts, exception
from zun.common import utils as zun_utils
from zun.common.context import RequestContext
from zun.compute import node_health, quota, relocation
from zun.compute import rpcapi as rpcapi_mod
from zun.conf import CONF
from zun.db import engine, models
from zun.db.queries import actions as action_q
from zun.db.queries import compute_nodes
from zun.db.queries import containers as container_q
from zun.db.queries import node as node_q
from zun.image import commit_rules
from zun.scheduler import claims, filters, placement, scheduler

LOG = logging.getLogger(__name__)

UNEXPECTED_REASON = "Unexpected exception occurred."
IN_PROGRESS_SUFFIX = " (another action is in progress)"

_GREEK = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
    "pi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
)


def generate_name() -> str:
    """A name like Zun's generated ones: ``<greek letter>-<1..24>-container``."""
    return f"{random.choice(_GREEK)}-{random.randint(1, 24)}-container"


@dataclass
class CreateRequest:
    """Everything create needs beyond the row's own values."""

    values: dict[str, Any]
    run: bool = False
    requested_networks: list[dict[str, Any]] = field(default_factory=list)
    requested_volumes: list[dict[str, Any]] = field(default_factory=list)
    requested_host: str | None = None
    availability_zone: str | None = None
    hints: dict[str, Any] = field(default_factory=dict)


class ContainerHostEngineDown(exception.ContainerHostNotUp):
    """The host's agent is up but its engine does not answer (its heartbeat says so): a
    clear 409 at once, instead of a call that waits for the RPC timeout (503)."""

    message = "Container %(container)s: %(reason)s Retry when the engine is back."
    code = 409


def _require_engine(host: str, container_uuid: str) -> None:
    with engine.transaction(readonly=True) as session:
        unhealthy = node_health.unhealthy_hosts(session, {host})
    if host in unhealthy:
        raise ContainerHostEngineDown(container=container_uuid, reason=unhealthy[host])


def _state_error(container: models.Container, action: str) -> exception.InvalidStateException:
    return exception.InvalidStateException(
        id=container.uuid, action=action, actual_state=container.status
    )


# Rows the node answers a show for from the row itself, without asking the engine
# (ContainerManager.container_show): the API answers those alone, so a client polling a
# container being created costs no call to the node doing the create.
_SHOWN_AS_STORED = frozenset({consts.CREATING, consts.DELETING, consts.DELETED})


def _node_would_refresh(row: Any) -> bool:
    return not row.task_state and row.status not in _SHOWN_AS_STORED


class ContainerAPI:
    """Operations on containers for the REST handlers (one instance per process is enough)."""

    def __init__(self, rpcapi: rpcapi_mod.ContainerRPCAPI | None = None) -> None:
        self._rpcapi = rpcapi

    @property
    def rpcapi(self) -> rpcapi_mod.ContainerRPCAPI:
        return self._rpcapi or rpcapi_mod.get_rpcapi()

    # --- create ---------------------------------------------------------------------------

    def create(self, context: RequestContext, request: CreateRequest) -> str:
        """Insert, schedule, claim, record and cast; returns the new container's UUID."""
        values = dict(request.values)
        values.setdefault("uuid", uuidutils.generate_uuid())
        uuid = values["uuid"]
        cpu, memory_mb, disk_gb = claims.container_resources(
            values.get("cpu"), values.get("memory"), values.get("disk")
        )
        sched_request = filters.Request(
            cpu=cpu,
            memory_mb=memory_mb,
            disk_gb=disk_gb,
            runtime=values.get("runtime"),
            availability_zone=request.availability_zone,
            hints=request.hints,
            cpu_policy=values.get("cpu_policy"),
            project_id=values.get("project_id"),
        )
        replay = relocation.create_request(
            run=request.run,
            requested_networks=request.requested_networks,
            requested_volumes=request.requested_volumes,
            is_admin=context.is_admin,
            availability_zone=request.availability_zone,
            hints=request.hints,
        )
        consumer = placement.consumer_of(
            uuid,
            values.get("project_id"),
            values.get("user_id"),
            placement.resources_of(cpu, memory_mb, disk_gb),
            new=True,
        )
        host, failure = self._insert_and_schedule(
            context,
            values,
            request.requested_host,
            {"containers": 1, "cpu": cpu, "memory": memory_mb, "disk": disk_gb},
            sched_request,
            replay,
            consumer,
        )
        if failure is not None:
            raise failure
        if host is None:
            return uuid  # NoValidHost: the row is in Error (202, as in Zun)
        try:
            self.rpcapi.container_create(
                context,
                host,
                uuid,
                run=request.run,
                requested_networks=request.requested_networks,
                requested_volumes=request.requested_volumes,
            )
        except Exception as exc:
            LOG.exception("Sending container_create for %s to %s failed", uuid, host)
            self._undo_create_cast(context, uuid, host, (cpu, memory_mb, disk_gb), exc)
            raise
        return uuid

    @engine.retry_on_deadlock
    def _insert_and_schedule(
        self,
        context: RequestContext,
        values: dict[str, Any],
        requested_host: str | None,
        requested: Mapping[str, float],
        sched_request: filters.Request,
        replay: dict[str, Any],
        consumer: placement.Consumer | None = None,
    ) -> tuple[str | None, Exception | None]:
        """ONE write transaction: name and quota checks, the row (Creating), then the host's
        claim, the row's host and the create action with its first attempt.

        ``(host, None)`` when scheduled; ``(None, None)`` when no host fits and
        ``(None, exc)`` when scheduling failed otherwise: the row is then committed in Error
        without host or claim (the scheduling part is rolled back to a savepoint), and the
        caller raises ``exc``. A quota or name refusal raises with nothing written. One
        transaction instead of two halves the writes a create queues for (on SQLite every
        writer of the process queues on one lock) and keeps quota, row and claim atomic.
        """
        uuid = values["uuid"]
        scope = str(CONF.compute.unique_container_name_scope or "")
        with engine.transaction() as session:
            container_q.ensure_name_available(
                session, values.get("name"), scope, values.get("project_id")
            )
            if requested_host and not compute_nodes.hostname_exists(session, requested_host):
                raise exception.RequestedHostNotFound(host=requested_host)
            # The quota lock is held until this transaction commits the new row.
            quota.enforce_in_transaction(session, context, values.get("project_id"), requested)
            container_q.insert(session, {**values, "status": consts.CREATING, "task_state": None})
            try:
                with session.begin_nested():
                    host = scheduler.select_and_claim(
                        session, sched_request, requested_host, consumer=consumer
                    )
                    container_q.update(
                        session, uuid, {"host": host, "task_state": consts.CONTAINER_CREATING}
                    )
                    # The request is kept with the attempt, so the create can move hosts.
                    relocation.record_first(session, context, uuid, host, replay)
            except exception.NoValidHost:
                container_q.update(
                    session,
                    uuid,
                    {"status": consts.ERROR, "status_reason": scheduler.NO_VALID_HOST_REASON},
                )
                return None, None
            except (db_exc.DBError, exception.PlacementUnavailable):
                # The whole transaction goes (a Placement allocation made in it is put back):
                # retried on a deadlock; else the client gets the error (Placement: a 503
                # to retry) and, never having learnt this UUID, finds nothing left.
                raise
            except Exception as exc:
                LOG.exception("Scheduling container %s failed", uuid)
                container_q.update(
                    session, uuid, {"status": consts.ERROR, "status_reason": UNEXPECTED_REASON}
                )
                # A Placement allocation made before the failure is not kept by the row.
                placement.release_after_commit(session, uuid)
                return None, exc
        return host, None

    @staticmethod
    def _undo_create_cast(
        context: RequestContext,
        uuid: str,
        host: str,
        resources: tuple[float, int, int],
        exc: BaseException,
    ) -> None:
        with engine.transaction() as session:
            container_q.update(
                session,
                uuid,
                {
                    "status": consts.ERROR,
                    "task_state": None,
                    "host": None,
                    "status_reason": f"The create request could not be sent to host {host}: {exc}",
                },
            )
            claims.release(session, host, *resources)
            action_q.finish_action(session, uuid, context.request_id, error=True)
            placement.release_after_commit(session, uuid)

    # --- lookups --------------------------------------------------------------------------

    @staticmethod
    def get(
        context: RequestContext, ident: str, all_projects: bool | None = None
    ) -> models.Container:
        with engine.transaction(readonly=True) as session:
            return container_q.get_by_ident(session, context, ident, all_projects)

    def show_view_row(
        self,
        context: RequestContext,
        ident: str,
        check: Callable[[Any], None],
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """The view columns of ``ident`` (404/409), refreshed from the node when its host is
        up, and ``{host: reason}`` when its host is unhealthy (``node_health``).

        The lookup and the host's health come from one statement; ``check`` (the policy
        on the row) runs before the node is asked. A row with a task in flight, or being
        created or deleted, is not refreshed: the node would answer it from the row too. A
        host that is down, unhealthy or slow only costs the refresh: the stored copy is
        returned, as in Zun (which logged ContainerHostNotUp and answered 200).
        """
        refresh_error: Exception | None = None
        unhealthy: dict[str, str] = {}
        # The row and its host's service in one statement: a show is what fast-polling
        # clients ask hundreds of times a second while their creates run.
        row, data, service = container_q.find_view_row_and_service(context, ident)
        up = False
        if row.host:
            up, reason = node_health.service_health(service)
            if reason is not None:
                unhealthy = {row.host: reason}
        refresh = bool(row.host) and row.host not in unhealthy and _node_would_refresh(row)
        if refresh:
            try:
                if not self.rpcapi.host_up(row.host, known=up):
                    refresh_error = rpcapi_mod.ContainerHostDown(container=row.uuid, host=row.host)
            except Exception as exc:  # noqa: BLE001 - e.g. no bus: the stored copy
                refresh_error = exc
        check(row)
        if not refresh:
            return data, unhealthy
        try:
            if refresh_error is not None:
                raise refresh_error
            fresh = self.rpcapi.container_show(context, row.host, row.uuid, host_checked=True)
        except Exception as exc:  # noqa: BLE001 - any refresh failure falls back to the DB
            LOG.info("Showing container %s from the database: %s", row.uuid, exc)
        else:
            if isinstance(fresh, Mapping):
                for key, value in fresh.items():
                    if key in container_q.VIEW_COLUMNS and key != "uuid":
                        data[key] = value
        return data, unhealthy

    # --- casts with compare-and-swap --------------------------------------------------------

    def _claim_task(
        self,
        context: RequestContext,
        container: models.Container,
        state_key: str,
        action: str | None,
        values: Mapping[str, Any],
        *,
        statuses: Iterable[str] | None = None,
        idle: bool = True,
        verb: str | None = None,
    ) -> None:
        """CAS ``values`` (which include the task state) and record ``action``, or 409."""
        allowed = list(statuses if statuses is not None else zun_utils.VALID_STATES[state_key])
        with engine.transaction() as session:
            won = container_q.cas_update(
                session,
                container.uuid,
                values,
                statuses=allowed,
                task_states=(None,) if idle else None,
            )
            if not won:
                current = container_q.get_by_uuid(session, container.uuid)
                if current is None:
                    raise container_q.not_found(container.uuid)
                error = _state_error(current, verb or state_key)
                if current.status in allowed:
                    error = exception.InvalidStateException(
                        message=error.message + IN_PROGRESS_SUFFIX
                    )
                raise error
            if action:
                action_q.start_action(session, context, container.uuid, action)

    @staticmethod
    def _release_task(
        context: RequestContext,
        container: models.Container,
        task_state: str,
        restore: Mapping[str, Any],
    ) -> None:
        with engine.transaction() as session:
            container_q.cas_update(
                session, container.uuid, {"task_state": None, **restore}, task_states=(task_state,)
            )
            action_q.finish_action(session, container.uuid, context.request_id, error=True)

    def _cast_action(
        self,
        context: RequestContext,
        container: models.Container,
        state_key: str | None,
        action: str | None,
        task_state: str,
        send: Callable[[str], None],
        *,
        extra: Mapping[str, Any] | None = None,
        statuses: Iterable[str] | None = None,
        idle: bool = True,
        verb: str | None = None,
        needs_engine: bool = True,
    ) -> None:
        if state_key is not None:
            zun_utils.validate_container_state(container, state_key)
        host = self.rpcapi.require_up(container.host, container.uuid)
        if needs_engine:
            _require_engine(host, container.uuid)
        values = {"task_state": task_state, **(extra or {})}
        if statuses is None and state_key is None:
            statuses = consts.CONTAINER_STATUSES
        self._claim_task(
            context,
            container,
            state_key or "",
            action,
            values,
            statuses=statuses,
            idle=idle,
            verb=verb or state_key,
        )
        try:
            send(host)
        except Exception:
            restore = {key: getattr(container, key) for key in (extra or {})}
            self._release_task(context, container, task_state, restore)
            raise

    def start(self, context: RequestContext, container: models.Container) -> None:
        self._cast_action(
            context,
            container,
            "start",
            "start",
            consts.CONTAINER_STARTING,
            lambda h: self.rpcapi.container_start(context, h, container.uuid),
        )

    def stop(
        self, context: RequestContext, container: models.Container, timeout: int | None
    ) -> None:
        self._cast_action(
            context,
            container,
            "stop",
            "stop",
            consts.CONTAINER_STOPPING,
            lambda h: self.rpcapi.container_stop(context, h, container.uuid, timeout),
        )

    def reboot(
        self, context: RequestContext, container: models.Container, timeout: int | None
    ) -> None:
        self._cast_action(
            context,
            container,
            "reboot",
            "reboot",
            consts.CONTAINER_REBOOTING,
            lambda h: self.rpcapi.container_reboot(context, h, container.uuid, timeout),
            extra={"status": consts.RESTARTING},
        )

    def pause(self, context: RequestContext, container: models.Container) -> None:
        self._cast_action(
            context,
            container,
            "pause",
            "pause",
            consts.CONTAINER_PAUSING,
            lambda h: self.rpcapi.container_pause(context, h, container.uuid),
        )

    def unpause(self, context: RequestContext, container: models.Container) -> None:
        self._cast_action(
            context,
            container,
            "unpause",
            "unpause",
            consts.CONTAINER_UNPAUSING,
            lambda h: self.rpcapi.container_unpause(context, h, container.uuid),
        )

    def kill(
        self, context: RequestContext, container: models.Container, signal: str | None
    ) -> None:
        self._cast_action(
            context,
            container,
            "kill",
            "kill",
            consts.CONTAINER_KILLING,
            lambda h: self.rpcapi.container_kill(context, h, container.uuid, signal),
        )

    def rebuild(
        self,
        context: RequestContext,
        container: models.Container,
        *,
        image: str | None,
        image_driver: str | None,
    ) -> None:
        # run is decided by the status we saw, so the CAS requires that very status.
        run = container.status == consts.RUNNING
        extra: dict[str, Any] = {"status": consts.REBUILDING}
        if image:
            extra["image"] = image
        if image_driver:
            extra["image_driver"] = image_driver
        self._cast_action(
            context,
            container,
            "rebuild",
            "rebuild",
            consts.CONTAINER_REBUILDING,
            lambda h: self.rpcapi.container_rebuild(
                context,
                h,
                container.uuid,
                run=run,
                image=image or container.image,
                image_driver=image_driver or container.image_driver,
            ),
            extra=extra,
            statuses=[container.status],
        )

    def resize_container(
        self,
        context: RequestContext,
        container: models.Container,
        *,
        cpu: float | None,
        memory: str | None,
    ) -> None:
        self._cast_action(
            context,
            container,
            "resize_container",
            "update",
            consts.CONTAINER_RESIZING,
            lambda h: self.rpcapi.resize_container(
                context, h, container.uuid, cpu=cpu, memory=memory
            ),
        )

    def network_attach(
        self,
        context: RequestContext,
        container: models.Container,
        *,
        network: str,
        fixed_ip: str | None,
        requested_network: dict[str, Any] | None = None,
    ) -> None:
        self._cast_action(
            context,
            container,
            None,
            "network_attach",
            consts.NETWORK_ATTACHING,
            lambda h: self.rpcapi.network_attach(
                context,
                h,
                container.uuid,
                network=network,
                fixed_ip=fixed_ip,
                requested_network=requested_network,
            ),
            verb="network_attach",
        )

    def add_security_group(
        self, context: RequestContext, container: models.Container, security_group: str
    ) -> None:
        self._cast_action(
            context,
            container,
            "add_security_group",
            "add_security_group",
            consts.SG_ADDING,
            lambda h: self.rpcapi.add_security_group(
                context, h, container.uuid, security_group=security_group
            ),
        )

    def remove_security_group(
        self, context: RequestContext, container: models.Container, security_group: str
    ) -> None:
        self._cast_action(
            context,
            container,
            "remove_security_group",
            "remove_security_group",
            consts.SG_REMOVING,
            lambda h: self.rpcapi.remove_security_group(
                context, h, container.uuid, security_group=security_group
            ),
        )

    def network_detach(
        self, context: RequestContext, container: models.Container, *, network: str
    ) -> None:
        self._cast_action(
            context,
            container,
            None,
            "network_detach",
            consts.NETWORK_DETACHING,
            lambda h: self.rpcapi.network_detach(context, h, container.uuid, network=network),
            verb="network_detach",
        )

    def commit(
        self,
        context: RequestContext,
        container: models.Container,
        *,
        repository: str,
        tag: str | None,
    ) -> str:
        """Create the image row, then cast the commit; returns the new image's UUID."""
        zun_utils.validate_container_state(container, "commit")
        host = self.rpcapi.require_up(container.host, container.uuid)
        _require_engine(host, container.uuid)
        # Namespace, an existing name, the per-project bound (zun/image/commit_rules.py).
        with engine.transaction(readonly=True) as session:
            tag = commit_rules.check(session, context, repository, tag, host)
        image_uuid = uuidutils.generate_uuid()
        self._claim_task(
            context, container, "commit", "commit", {"task_state": consts.CONTAINER_COMMITTING}
        )
        try:
            try:
                with engine.transaction() as session:
                    session.add(
                        models.Image(
                            uuid=image_uuid,
                            repo=repository,
                            tag=tag,
                            host=host,
                            project_id=context.project_id,
                            user_id=context.user_id,
                        )
                    )
            except db_exc.DBDuplicateEntry:
                # Another commit of the same name won the race.
                raise exception.ImageAlreadyExists(repo=repository, tag=tag) from None
            self.rpcapi.container_commit(
                context, host, container.uuid, repository=repository, tag=tag, image_uuid=image_uuid
            )
        except Exception:
            self._release_task(context, container, consts.CONTAINER_COMMITTING, {})
            raise
        return image_uuid

    # --- delete -------------------------------------------------------------------------------

    def delete(
        self, context: RequestContext, container: models.Container, *, force: bool, stop: bool
    ) -> None:
        """Delete (204): at once when the container has no host, else by the node."""
        if stop:
            state_key = "delete_after_stop"
        elif force:
            state_key = "delete_force"
        else:
            state_key = "delete"
        zun_utils.validate_container_state(container, state_key)
        allowed = zun_utils.VALID_STATES[state_key]
        if not container.host:
            with engine.transaction() as session:
                if not container_q.destroy(session, container.uuid, statuses=allowed):
                    current = container_q.get_by_uuid(session, container.uuid)
                    if current is None:
                        return
                    raise _state_error(current, state_key)
            return
        if force and self._host_down(container.host):
            self._delete_on_down_host(context, container, state_key)
            return
        stop_first = bool(stop and container.status == consts.RUNNING)
        self._cast_action(
            context,
            container,
            state_key,
            "delete",
            consts.CONTAINER_DELETING,
            lambda h: self.rpcapi.container_delete(
                context, h, container.uuid, force=force, stop_first=stop_first
            ),
            # A forced delete goes on without the engine (the node removes the row).
            extra={"status": consts.DELETING},
            idle=not force,
            needs_engine=not force,
        )

    @staticmethod
    def _host_down(host: str | None) -> bool:
        if not host:
            return False
        with engine.transaction(readonly=True) as session:
            return node_health.host_down(session, host) is not None

    @staticmethod
    def _delete_on_down_host(
        context: RequestContext, container: models.Container, state_key: str
    ) -> None:
        """A forced delete needs no node: the row, its volume records and its claim go now.

        What the dead node holds (the engine container, its volumes) is reaped when the node
        comes back: its reaper removes labelled engine containers that have no row.
        """
        cpu, memory_mb, disk_gb = claims.container_resources(
            container.cpu, container.memory, container.disk
        )
        with engine.transaction() as session:
            current = container_q.get_by_uuid(session, container.uuid)
            if current is None:
                return
            if current.status not in zun_utils.VALID_STATES[state_key]:
                raise _state_error(current, state_key)
            host = current.host
            node_q.destroy_with_volume_records(session, container.uuid)
            if host:
                claims.release(session, host, cpu, memory_mb, disk_gb)
            placement.release_after_commit(session, container.uuid)
        LOG.warning(
            "Container %s deleted while its host %s is down; the host reaps its "
            "engine container when it is back",
            container.uuid,
            container.host,
        )

    # --- updates --------------------------------------------------------------------------

    @staticmethod
    def rename(context: RequestContext, container: models.Container, name: str) -> None:
        scope = str(CONF.compute.unique_container_name_scope or "")
        with engine.transaction() as session:
            container_q.ensure_name_available(
                session, name, scope, container.project_id, exclude_uuid=container.uuid
            )
            container_q.update(session, container.uuid, {"name": name})

    def update(
        self, context: RequestContext, container: models.Container, changes: Mapping[str, Any]
    ) -> None:
        """PATCH: name/auto_heal saved directly; cpu/memory applied live on the node first.

        The new limits are checked against the quota and claimed on the host in one
        transaction, then the node is asked to apply them; if it refuses, both are undone.
        """
        zun_utils.validate_container_state(container, "update")
        direct = {k: v for k, v in changes.items() if k in ("name", "auto_heal")}
        live = {k: v for k, v in changes.items() if k in ("cpu", "memory")}
        if "name" in direct and direct["name"] is not None:
            self.rename(context, container, direct["name"])
        if "auto_heal" in direct:
            with engine.transaction() as session:
                container_q.update(session, container.uuid, {"auto_heal": direct["auto_heal"]})
        if not live:
            return
        host = self.rpcapi.require_up(container.host, container.uuid)
        _require_engine(host, container.uuid)
        old = claims.container_resources(container.cpu, container.memory, None)
        new = claims.container_resources(
            live.get("cpu", container.cpu), live.get("memory", container.memory), None
        )
        delta_cpu, delta_mem = new[0] - old[0], new[1] - old[1]
        self._apply_resource_delta(context, container, host, delta_cpu, delta_mem, live)
        try:
            self.rpcapi.container_update(
                context, host, container.uuid, cpu=live.get("cpu"), memory=live.get("memory")
            )
        except Exception:
            restore = {"cpu": container.cpu, "memory": container.memory}
            self._apply_resource_delta(
                context, container, host, -delta_cpu, -delta_mem, restore, enforce=False
            )
            raise

    @staticmethod
    def _apply_resource_delta(
        context: RequestContext,
        container: models.Container,
        host: str,
        delta_cpu: float,
        delta_mem: int,
        values: Mapping[str, Any],
        enforce: bool = True,
    ) -> None:
        with engine.transaction() as session:
            if enforce:
                quota.enforce_in_transaction(
                    session,
                    context,
                    container.project_id,
                    {
                        "containers": 0,
                        "cpu": max(delta_cpu, 0),
                        "memory": max(delta_mem, 0),
                        "disk": 0,
                    },
                )
            container_q.update(session, container.uuid, dict(values))
            grow_cpu, grow_mem = max(delta_cpu, 0), max(delta_mem, 0)
            whole = claims.container_resources(
                values.get("cpu", container.cpu), values.get("memory", container.memory), None
            )
            if (grow_cpu or grow_mem) and not claims.claim(
                session, host, grow_cpu, grow_mem, totals=whole[:2]
            ):
                raise exception.Conflict(
                    message=f"Host {host} does not have enough resources for this update."
                )
            shrink_cpu, shrink_mem = max(-delta_cpu, 0), max(-delta_mem, 0)
            if shrink_cpu or shrink_mem:
                claims.release(session, host, shrink_cpu, shrink_mem)
            if placement.enabled():
                _resize_allocation(session, container, host, whole)

    # --- calls ----------------------------------------------------------------------------

    def call(
        self, container: models.Container, state_key: str | None, send: Callable[[str], Any]
    ) -> Any:
        """Check the state (409) and the host (409 when down), then run the call."""
        if state_key is not None:
            zun_utils.validate_container_state(container, state_key)
        host = self.rpcapi.require_up(container.host, container.uuid)
        _require_engine(host, container.uuid)
        return send(host)


def _resize_allocation(
    session: Any, container: models.Container, host: str, whole: tuple[float, int, int]
) -> None:
    """The container's allocation in Placement set to its new limits, in the transaction
    that stores them (a rollback puts the old one back); 409 when Placement has no room."""
    rp = scheduler.provider_uuids(session, [host]).get(host)
    if rp is None:
        return  # the node has not reported to Placement: its reconciliation will
    consumer = placement.consumer_of(
        container.uuid,
        container.project_id,
        container.user_id,
        placement.resources_of(whole[0], whole[1], container.disk),
    )
    if not placement.claim_in_transaction(session, consumer, rp):
        raise exception.Conflict(
            message=f"Host {host} does not have enough resources for this update "
            "(Placement refused the new allocation)."
        )


_API: ContainerAPI | None = None


def get_api() -> ContainerAPI:
    global _API
    if _API is None:
        _API = ContainerAPI()
    return _API
