"""The node side of containers: ``ContainerManager``, the RPC endpoint of zun-compute.

Arguments are container UUIDs (never objects): each method loads the row itself. Casts hand
their work to a bounded pool keyed by container UUID (:class:`KeyedExecutor`), so the RPC
server's thread is free at once and the actions on one container run one at a time, in the
order they arrived. Calls run in the RPC thread and answer the API directly.

Each cast ends with ONE conditional UPDATE that writes the final status and clears the task
state it started from (see :mod:`zun.db.queries.node`), and finishes the container-action
event (``compute__do_container_<action>``) with ``Success`` or ``Error``. A failed create
releases what it took -- engine container, volumes Zun made, the project network when nothing
else uses it, the host claim -- and leaves the row in ``Error`` with the reason, without a
host: nothing of it is left on the node.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import datetime
import logging
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import requests.exceptions

from zun.common import consts, exception
from zun.common import utils as zun_utils
from zun.common.context import RequestContext
from zun.compute import claims
from zun.compute.image_rows import ImageRows
from zun.compute.keyed_executor import KeyedExecutor
from zun.console import tokens as console_tokens
from zun.db import engine
from zun.db.queries import actions as action_q
from zun.db.queries import node as node_q
from zun.image import docker_driver as image_driver
from zun.network import access as network_access
from zun.network import addresses as net_addresses
from zun.network import docker_network
from zun.runtime.docker import spec as spec_mod
from zun.runtime.docker.client import call, is_not_found, make_client
from zun.runtime.docker.driver import REASON_NOT_IN_ENGINE, DockerDriver
from zun.runtime.docker.status import map_docker_state
from zun.volume import local as local_volume

LOG = logging.getLogger(__name__)

# Task states of the contract that the shared constants may not define.
CONTAINER_RESIZING = getattr(consts, "CONTAINER_RESIZING", "container_resizing")
CONTAINER_COMMITTING = getattr(consts, "CONTAINER_COMMITTING", "container_committing")

LABEL_HOST = "zun.host"
DEFAULT_MAX_WORKERS = 32
DELETE_STOP_TIMEOUT = 10
# How long a kill waits for the process to be gone before reading the state back.
KILL_SETTLE_SECONDS = 2
REASON_CREATE_INTERRUPTED = "Container failed to create correctly"

_ACTIONABLE = docker.errors.DockerException, requests.exceptions.RequestException


def _event(action: str) -> str:
    return f"compute__do_container_{action}"


reason_of = exception.status_reason


def _decrypt(secret: str | None) -> str | None:
    """Registry passwords are stored Fernet-encrypted (see zun.common.crypt); a wrong key
    raises InvalidEncryptionKey, whose message never holds the secret."""
    if not secret:
        return secret
    try:
        from zun.common import crypt  # type: ignore[attr-defined]
    except ModuleNotFoundError:  # a build without it stores the password as given
        return secret
    return crypt.decrypt(secret)


def proxy_url(container_uuid: str, token: str, exec_id: str | None = None) -> str:
    base = str(zun_utils.conf_value("websocket_proxy", "base_url", "ws://127.0.0.1:6784/"))
    url = f"{base}?token={token}&uuid={container_uuid}"
    return f"{url}&exec_id={exec_id}" if exec_id else url


@dataclass
class _Taken:
    """What a create (or rebuild) took so far, to give back on failure."""

    records: list[dict[str, Any]] = field(default_factory=list)
    project_network: str | None = None
    engine_created: bool = False


class ContainerManager:
    """RPC endpoint for container methods on one host (see containers-contract.md)."""

    def __init__(self, host: str, driver: DockerDriver | None = None,
                 docker_client: docker.DockerClient | None = None,
                 state_dir: str | Path | None = None, max_workers: int | None = None) -> None:
        self.host = host
        self._docker = docker_client
        self._driver = driver
        self._state_dir = Path(state_dir) if state_dir else None
        self.workers = KeyedExecutor(max_workers or DEFAULT_MAX_WORKERS, "zun-compute")
        self._image_rows = ImageRows(host)
        self._known_networks: set[str] = set()

    # --- plumbing -------------------------------------------------------------------------

    @property
    def docker(self) -> docker.DockerClient:
        """docker-py's high-level client over the same connection pool as the driver."""
        if self._docker is None:
            api = self._driver.client if self._driver is not None else make_client()
            client = docker.DockerClient.__new__(docker.DockerClient)
            client.api = api  # DockerClient's only state; no second connection pool
            self._docker = client
        return self._docker

    @property
    def driver(self) -> DockerDriver:
        if self._driver is None:
            self._driver = DockerDriver(client=self.docker.api)
        return self._driver

    @property
    def state_dir(self) -> Path:
        if self._state_dir is None:
            path = zun_utils.conf_value(None, "state_path", None) or "/var/lib/zun"
            self._state_dir = Path(path)
        return self._state_dir

    def init_host(self, context: RequestContext) -> None:
        """Start-up: report the node's inventory, then recover interrupted work."""
        from zun.compute import periodic_tasks, recovery

        try:
            periodic_tasks.update_inventory(self, context)
        except Exception:
            LOG.exception("Initial inventory of %s failed", self.host)
        recovery.recover(self, context)

    def periodic_tasks(self) -> list[tuple[Callable[[RequestContext], None], float, bool]]:
        from zun.compute import periodic_tasks

        return periodic_tasks.tasks_for(self)

    def cleanup_host(self) -> None:
        self.workers.shutdown(wait=True)
        if self._driver is not None:
            self._driver.close()

    def submit(self, context: RequestContext, container_uuid: str,
               fn: Callable[..., None], *args: Any) -> Any:
        """Queue ``fn(context, container_uuid, *args)`` behind the container's other jobs."""
        return self.workers.submit(container_uuid, self._run_job, context, container_uuid, fn,
                                   *args)

    @staticmethod
    def _run_job(context: RequestContext, container_uuid: str, fn: Callable[..., None],
                 *args: Any) -> None:
        # Log lines of this thread carry the request id of the API request.
        context.update_store()
        try:
            fn(context, container_uuid, *args)
        except Exception:
            LOG.exception("%s of container %s failed", fn.__name__, container_uuid)

    @staticmethod
    def _load(container_uuid: str) -> Any:
        with engine.transaction(readonly=True) as session:
            return node_q.get_container(session, container_uuid)

    def _load_for_call(self, container_uuid: str) -> Any:
        row = self._load(container_uuid)
        if row is None:
            raise exception.ContainerNotFound(container=container_uuid)
        return row

    @staticmethod
    def _start_event(context: RequestContext, container_uuid: str, action: str,
                     task_state: str | None = None,
                     from_states: tuple[str | None, ...] = ()) -> None:
        with engine.transaction() as session:
            if task_state is not None:
                node_q.cas_update(session, container_uuid, {"task_state": task_state},
                                  task_states=from_states)
            if context.request_id:
                action_q.start_event(session, container_uuid, context.request_id,
                                     _event(action))

    @staticmethod
    def _set_task(container_uuid: str, task_state: str, current: str) -> None:
        with engine.transaction() as session:
            node_q.cas_update(session, container_uuid, {"task_state": task_state},
                              task_states=(current,))

    @staticmethod
    def _finish(context: RequestContext, container_uuid: str, action: str,
                values: dict[str, Any], task_states: tuple[str | None, ...],
                exc: BaseException | None = None, statuses: tuple[str, ...] | None = None,
                extra: Callable[[Any], None] | None = None,
                started: datetime.datetime | None = None) -> bool:
        """Final write (CAS on the task state) and the event, in one transaction.

        ``started``: the event was not written when the work began (create, to keep a
        write off its path); it is recorded whole now."""
        result = action_q.RESULT_ERROR if exc else action_q.RESULT_SUCCESS
        trace = "".join(traceback.format_exception(exc)) if exc else None
        with engine.transaction() as session:
            won = node_q.cas_update(session, container_uuid, values, task_states=task_states,
                                    statuses=statuses)
            if won and extra is not None:
                extra(session)
            if context.request_id and started is not None:
                node_q.record_event(session, container_uuid, context.request_id,
                                    _event(action), started, result, trace)
            elif context.request_id:
                action_q.finish_event(session, container_uuid, context.request_id,
                                      _event(action), result=result, traceback=trace)
        return won

    def _engine_fields(self, row: Any, info: dict[str, Any] | None = None) -> dict[str, Any]:
        """Status fields, container id and addresses of ``row`` as the engine sees it now."""
        if info is None:
            info = self.driver.inspect(row)
        fields = map_docker_state(info.get("State"), status=row.status,
                                  status_reason=row.status_reason,
                                  status_detail=row.status_detail, force=True)
        return {"status": fields.status, "status_reason": fields.status_reason,
                "status_detail": fields.status_detail, "container_id": info["Id"],
                "addresses": net_addresses.addresses_from_inspect(info)}

    # --- image ----------------------------------------------------------------------------

    def _auth_for(self, registry: Any, repo: str) -> dict[str, str] | None:
        if registry is not None:
            if not registry.username:
                return None
            return {"username": registry.username, "password": _decrypt(registry.password) or "",
                    "serveraddress": registry.domain}
        default = zun_utils.conf_value("docker", "default_registry", None)
        user = zun_utils.conf_value("docker", "default_registry_username", None)
        if default and user and repo.startswith(f"{default}/"):
            password = zun_utils.conf_value("docker", "default_registry_password", None)
            return {"username": user, "password": password or "", "serveraddress": default}
        return None

    def _pull(self, row: Any, image: str | None = None, driver_name: str | None = None,
              on_pull: Callable[[], None] | None = None) -> str:
        """Make the row's image present as its pull policy says; returns the engine ref.

        ``on_pull`` runs before an actual pull (the create sets task image_pulling then)."""
        image = image or row.image
        driver_name = driver_name or row.image_driver or zun_utils.conf_value(
            None, "default_image_driver", consts.IMAGE_DRIVER_DOCKER)
        if driver_name != consts.IMAGE_DRIVER_DOCKER:
            raise exception.OperationNotSupported(
                message=f"Image driver {driver_name} is not available on host {self.host}; "
                        "use image_driver docker.")
        registry = None
        if row.registry_id:
            with engine.transaction(readonly=True) as session:
                registry = node_q.get_registry(session, row.registry_id)
            if registry is None:
                raise exception.RegistryNotFound(registry=row.registry_id)
        repo, tag = zun_utils.parse_image_name(image, driver_name, registry=registry)
        policy = zun_utils.get_image_pull_policy(
            (row.image_pull_policy or "").lower() or None, tag)
        ref = image_driver.image_ref(repo, tag)
        present = image_driver.inspect_image(self.driver.client, ref)
        if present is not None and not zun_utils.should_pull_image(policy, True):
            info = {"image_id": present["Id"], "size": present.get("Size")}
        else:
            if on_pull is not None and zun_utils.should_pull_image(policy, present is not None):
                on_pull()
            info = image_driver.pull_image(self.driver.client, repo, tag, policy,
                                           self._auth_for(registry, repo))
        self._image_rows.record(repo, tag, info, row.project_id, row.user_id)
        return ref

    # --- networks and volumes ---------------------------------------------------------------

    @contextlib.contextmanager
    def _networking(self, row: Any, requested: list[dict[str, Any]] | None,
                    taken: _Taken) -> Iterator[dict[str, Any]]:
        """The networking of a create; holds the project network's lock while it is used,
        so that a concurrent cleanup cannot remove the network before the container is on it."""
        if requested:
            endpoints: dict[str, dict[str, Any]] = {}
            for entry in requested:
                if entry.get("port"):
                    raise exception.Invalid(
                        message="Ports are Neutron's: this node attaches Docker networks only.")
                name = entry.get("network")
                try:
                    net = self.docker.networks.get(name)
                except docker.errors.NotFound:
                    raise exception.NetworkNotFound(network=name) from None
                endpoint: dict[str, Any] = {}
                if entry.get("v4-fixed-ip"):
                    endpoint["ipv4_address"] = entry["v4-fixed-ip"]
                if entry.get("v6-fixed-ip"):
                    endpoint["ipv6_address"] = entry["v6-fixed-ip"]
                endpoints[net.name] = endpoint
            yield {"network_mode": next(iter(endpoints)), "endpoints": endpoints}
            return
        project = row.project_id or "default"
        name = docker_network.project_network_name(project)
        with docker_network.project_network_lock(self.docker, project):
            # Networks this process made or saw stay until it removes them itself (under
            # this same lock); one removed behind our back makes the create fail with a 404,
            # after which the caller forgets it and tries once more.
            if name not in self._known_networks:
                name = docker_network.ensure_project_network_locked(self.docker, project).name
                self._known_networks.add(name)
            taken.project_network = project
            yield {"network_mode": name, "endpoints": {name: {}}}

    def _stored_networks(self, row: Any) -> list[dict[str, Any]] | None:
        """The networks a container was on (its ``addresses`` keys), to rebuild it alike;
        None (the project network) when it was on that one only, or on none."""
        project_net = docker_network.project_network_name(row.project_id or "default")
        names = list(row.addresses or {})
        if not names or names == [project_net]:
            return None
        return [{"network": name} for name in names]

    def _prepare_volumes(self, row: Any, requested: list[dict[str, Any]],
                         taken: _Taken) -> list[Any]:
        if not requested:
            return []
        mounts, records = local_volume.prepare_mounts(
            self.docker, row.uuid, requested, self.state_dir, project_id=row.project_id,
            user_id=row.user_id, host=self.host)
        taken.records = records
        with engine.transaction() as session:
            node_q.save_volume_records(session, records)
        return mounts

    def release_volumes(self, container_uuid: str, records: list[dict[str, Any]]) -> None:
        try:
            local_volume.release_mounts(self.docker, records, self.state_dir)
        finally:
            local_volume.release_container_volumes(self.docker, container_uuid, self.state_dir)

    def _release_project_network(self, project_id: str | None) -> None:
        project = project_id or "default"
        try:
            with docker_network.project_network_lock(self.docker, project):
                self._known_networks.discard(docker_network.project_network_name(project))
                docker_network.remove_project_network_if_unused_locked(self.docker, project)
        except Exception:
            LOG.warning("Could not remove the network of project %s", project_id, exc_info=True)

    def _create_engine_container(self, row: Any, image_ref: str,
                                 requested_networks: list[dict[str, Any]] | None,
                                 mounts: list[Any], taken: _Taken) -> None:
        spec_row = row.as_dict()
        # The host label lets the reaper of each node tell its own orphans from others'.
        spec_row["labels"] = {**(row.labels or {}), LABEL_HOST: self.host}
        try:
            with self._networking(row, requested_networks, taken) as networking:
                self.driver.create(spec_row, image_ref, networking, mounts=mounts or None)
        except exception.ZunException as exc:
            if requested_networks or not is_not_found(exc):
                raise
            self._known_networks.discard(
                docker_network.project_network_name(row.project_id or "default"))
            with self._networking(row, requested_networks, taken) as networking:
                self.driver.create(spec_row, image_ref, networking, mounts=mounts or None)
        taken.engine_created = True

    def _start_and_inspect(self, row: Any, run: bool) -> dict[str, Any]:
        if run:
            self.driver.start(row)
        try:
            values = self._engine_fields(row)
        except exception.ZunException as exc:
            if not (run and row.auto_remove and is_not_found(exc)):
                raise
            # It ran, exited and the engine removed it already, as asked.
            values = {"status": consts.DELETED, "status_detail": None, "addresses": {},
                      "container_id": row.container_id}
        if run:
            values["started_at"] = node_q.now()
        return values

    # --- create ---------------------------------------------------------------------------

    def container_create(self, context: RequestContext, container_uuid: str, run: bool = False,
                         requested_networks: list[dict[str, Any]] | None = None,
                         requested_volumes: list[dict[str, Any]] | None = None) -> None:
        self.submit(context, container_uuid, self._do_create, bool(run),
                    list(requested_networks or []), list(requested_volumes or []))

    def _do_create(self, context: RequestContext, container_uuid: str, run: bool,
                   requested_networks: list[dict[str, Any]],
                   requested_volumes: list[dict[str, Any]]) -> None:
        row = self._load(container_uuid)
        if row is None or row.status != consts.CREATING:
            LOG.info("Not creating container %s: it is %s", container_uuid,
                     "gone" if row is None else row.status)
            return
        taken = _Taken()
        started = node_q.now()
        try:
            pulling: list[bool] = []

            def on_pull() -> None:
                pulling.append(True)
                self._set_task(container_uuid, consts.IMAGE_PULLING, consts.CONTAINER_CREATING)

            image_ref = self._pull(row, on_pull=on_pull)
            if pulling:
                self._set_task(container_uuid, consts.CONTAINER_CREATING, consts.IMAGE_PULLING)
            network_access.check_joinable(context.is_admin, row.project_id,
                                          [n.get("network") for n in requested_networks])
            mounts = self._prepare_volumes(row, requested_volumes, taken)
            self._create_engine_container(row, image_ref, requested_networks, mounts, taken)
            row.container_id = spec_mod.engine_name(container_uuid)
            values = self._start_and_inspect(row, run)
        except Exception as exc:
            LOG.warning("Creating container %s failed: %s", container_uuid, reason_of(exc))
            self.fail_create(context, row, reason_of(exc), taken, exc, started)
            return
        values.update(task_state=None, status_reason=None)
        if not self._finish(context, container_uuid, "create", values,
                            (consts.CONTAINER_CREATING,), statuses=(consts.CREATING,),
                            started=started):
            self._after_lost_create(row, taken)
            return
        LOG.info("Container %s created: %s", container_uuid, values["status"])

    def _after_lost_create(self, row: Any, taken: _Taken) -> None:
        """The row changed under the create: a forced delete is queued (it cleans up), or
        the row is gone, in which case nothing may stay on the node."""
        if self._load(row.uuid) is not None:
            return
        LOG.info("Container %s was deleted while being created; removing it", row.uuid)
        self._undo(row, taken)

    def _undo(self, row: Any, taken: _Taken) -> None:
        """Give back the node-side things a create took (never raises)."""
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("engine container", lambda: self.driver.delete(row, force=True)),
            ("volumes", lambda: self.release_volumes(row.uuid, taken.records)),
        ]
        for what, step in steps:
            try:
                step()
            except Exception:
                LOG.warning("Could not release the %s of %s", what, row.uuid, exc_info=True)
        with contextlib.suppress(Exception):
            with engine.transaction() as session:
                node_q.delete_volume_records(session, row.uuid)
        self._release_project_network(row.project_id)

    def fail_create(self, context: RequestContext, row: Any, reason: str,
                    taken: _Taken | None = None, exc: BaseException | None = None,
                    started: datetime.datetime | None = None) -> None:
        """Error state for a create that cannot complete; the node keeps nothing of it."""
        taken = taken or _Taken()
        row.container_id = None  # remove the engine container by its name
        self._undo(row, taken)
        cpu, memory_mb, disk_gb = claims.container_resources(row.cpu, row.memory, row.disk)
        host = row.host

        def release(session: Any) -> None:
            if host:
                claims.release(session, host, cpu, memory_mb, disk_gb)

        values = {"status": consts.ERROR, "status_reason": reason, "task_state": None,
                  "host": None, "container_id": None, "status_detail": None, "addresses": None}
        self._finish(context, row.uuid, "create", values,
                     (consts.CONTAINER_CREATING, consts.IMAGE_PULLING, None),
                     exc=exc or exception.ZunException(message=reason),
                     statuses=(consts.CREATING,), extra=release, started=started or node_q.now())

    # --- delete ---------------------------------------------------------------------------

    def container_delete(self, context: RequestContext, container_uuid: str,
                         force: bool = False, stop_first: bool = False) -> None:
        self.submit(context, container_uuid, self._do_delete, bool(force), bool(stop_first))

    def _do_delete(self, context: RequestContext, container_uuid: str, force: bool,
                   stop_first: bool) -> None:
        row = self._load(container_uuid)
        if row is None:
            return
        self._start_event(context, container_uuid, "delete")
        try:
            if stop_first:
                try:
                    self.driver.stop(row, DELETE_STOP_TIMEOUT)
                except exception.ZunException as exc:
                    if not is_not_found(exc) and not force:
                        raise
            self.driver.delete(row, force=force or stop_first)
            with engine.transaction(readonly=True) as session:
                records = node_q.volume_records(session, container_uuid)
            self.release_volumes(container_uuid, records)
        except Exception as exc:
            if not force:
                LOG.warning("Deleting container %s failed: %s", container_uuid, reason_of(exc))
                self._finish(context, container_uuid, "delete",
                             {"status": consts.ERROR, "status_reason": reason_of(exc),
                              "task_state": None},
                             (consts.CONTAINER_DELETING, None), exc=exc)
                return
            LOG.warning("Forced delete of %s goes on despite: %s", container_uuid,
                        reason_of(exc))
        self._release_project_network(row.project_id)
        cpu, memory_mb, disk_gb = claims.container_resources(row.cpu, row.memory, row.disk)
        with engine.transaction() as session:
            current = node_q.get_container(session, container_uuid)
            if current is None:
                return
            if current.host:
                claims.release(session, current.host, cpu, memory_mb, disk_gb)
            node_q.delete_volume_records(session, container_uuid)
            node_q.destroy_container(session, container_uuid)

    # --- lifecycle actions ----------------------------------------------------------------

    def _action(self, context: RequestContext, container_uuid: str, action: str,
                task_state: str, work: Callable[[Any], None], error_on_failure: bool) -> None:
        """Run ``work(row)``, then write the engine's view of the container.

        On failure the status becomes Error (start, rebuild) or is read back from the engine
        (the others), the task state is cleared and the event records the error.
        """
        row = self._load(container_uuid)
        if row is None:
            return
        self._start_event(context, container_uuid, action)
        try:
            work(row)
            values = self._engine_fields(row)
        except Exception as exc:
            LOG.warning("%s of container %s failed: %s", action, container_uuid, reason_of(exc))
            values = {}
            if error_on_failure:
                values = {"status": consts.ERROR, "status_reason": reason_of(exc)}
            else:
                with contextlib.suppress(Exception):
                    values = self._engine_fields(row)
            values["task_state"] = None
            self._finish(context, container_uuid, action, values, (task_state, None), exc=exc)
            return
        values["task_state"] = None
        if error_on_failure:
            values["status_reason"] = None
        self._finish(context, container_uuid, action, values, (task_state, None))

    def container_start(self, context: RequestContext, container_uuid: str) -> None:
        self.submit(context, container_uuid, self._do_start)

    def _do_start(self, context: RequestContext, container_uuid: str) -> None:
        self._action(context, container_uuid, "start", consts.CONTAINER_STARTING,
                     self.driver.start, error_on_failure=True)

    def container_stop(self, context: RequestContext, container_uuid: str,
                       timeout: int | None = None) -> None:
        self.submit(context, container_uuid, self._do_stop, timeout)

    def _do_stop(self, context: RequestContext, container_uuid: str,
                 timeout: int | None = None) -> None:
        self._action(context, container_uuid, "stop", consts.CONTAINER_STOPPING,
                     lambda row: self.driver.stop(row, timeout), error_on_failure=False)

    def container_reboot(self, context: RequestContext, container_uuid: str,
                         timeout: int | None = None) -> None:
        self.submit(context, container_uuid, self._do_reboot, timeout)

    def _do_reboot(self, context: RequestContext, container_uuid: str,
                   timeout: int | None = None) -> None:
        self._action(context, container_uuid, "reboot", consts.CONTAINER_REBOOTING,
                     lambda row: self.driver.reboot(row, timeout), error_on_failure=False)

    def container_pause(self, context: RequestContext, container_uuid: str) -> None:
        self.submit(context, container_uuid, self._do_pause)

    def _do_pause(self, context: RequestContext, container_uuid: str) -> None:
        self._action(context, container_uuid, "pause", consts.CONTAINER_PAUSING,
                     self.driver.pause, error_on_failure=False)

    def container_unpause(self, context: RequestContext, container_uuid: str) -> None:
        self.submit(context, container_uuid, self._do_unpause)

    def _do_unpause(self, context: RequestContext, container_uuid: str) -> None:
        self._action(context, container_uuid, "unpause", consts.CONTAINER_UNPAUSING,
                     self.driver.unpause, error_on_failure=False)

    def container_kill(self, context: RequestContext, container_uuid: str,
                       signal: str | None = None) -> None:
        self.submit(context, container_uuid, self._do_kill, signal)

    def _do_kill(self, context: RequestContext, container_uuid: str,
                 signal: str | None = None) -> None:
        def work(row: Any) -> None:
            self.driver.kill(row, signal)
            # The signal is delivered asynchronously: give the process a moment to end so
            # the status read back is the result of the kill, not the instant before it.
            with contextlib.suppress(*_ACTIONABLE, exception.ZunException):
                self.driver.client.wait(self.driver.engine_ref(row), timeout=KILL_SETTLE_SECONDS,
                                        condition="not-running")

        self._action(context, container_uuid, "kill", consts.CONTAINER_KILLING, work,
                     error_on_failure=False)

    # --- rebuild --------------------------------------------------------------------------

    def container_rebuild(self, context: RequestContext, container_uuid: str,
                          run: bool | None = None, image: str | None = None,
                          image_driver: str | None = None) -> None:
        self.submit(context, container_uuid, self._do_rebuild, run, image, image_driver)

    def _do_rebuild(self, context: RequestContext, container_uuid: str, run: bool | None,
                    image: str | None, image_driver_name: str | None) -> None:
        """Replace the engine container with a new one from (possibly) a new image; the
        UUID, name, networks and volumes stay."""
        row = self._load(container_uuid)
        if row is None:
            return
        self._start_event(context, container_uuid, "rebuild")
        task = (consts.CONTAINER_REBUILDING, None)
        try:
            image_ref = self._pull(row, image, image_driver_name)
            self.driver.delete(row, force=True)
            with engine.transaction(readonly=True) as session:
                records = node_q.volume_records(session, container_uuid)
            mounts = local_volume.docker_mounts_for(self.docker, records, self.state_dir)
            row.container_id = None
            self._create_engine_container(row, image_ref, self._stored_networks(row), mounts,
                                          _Taken())
            row.container_id = spec_mod.engine_name(container_uuid)
            row.status = consts.CREATING  # the mapping reads "Created" for a new container
            values = self._start_and_inspect(row, bool(run))
        except Exception as exc:
            LOG.warning("Rebuilding container %s failed: %s", container_uuid, reason_of(exc))
            self._finish(context, container_uuid, "rebuild",
                         {"status": consts.ERROR, "status_reason": reason_of(exc),
                          "task_state": None}, task, exc=exc)
            return
        values.update(task_state=None, status_reason=None)
        if image:
            values["image"] = image
        if image_driver_name:
            values["image_driver"] = image_driver_name
        self._finish(context, container_uuid, "rebuild", values, task)

    # --- resources ------------------------------------------------------------------------

    def resize_container(self, context: RequestContext, container_uuid: str,
                         cpu: float | None = None, memory: str | None = None) -> None:
        self.submit(context, container_uuid, self._do_resize_container, cpu, memory)

    def _do_resize_container(self, context: RequestContext, container_uuid: str,
                             cpu: float | None, memory: str | None) -> None:
        row = self._load(container_uuid)
        if row is None:
            return
        self._start_event(context, container_uuid, "resize")
        task = (CONTAINER_RESIZING, None)
        try:
            self.driver.update(row, cpu=cpu, memory=memory)
        except Exception as exc:
            self._finish(context, container_uuid, "resize", {"task_state": None}, task, exc=exc)
            return
        values: dict[str, Any] = {"task_state": None}
        if cpu is not None:
            values["cpu"] = float(cpu)
        if memory is not None:
            values["memory"] = str(memory)
        host = row.host

        def recount(session: Any) -> None:
            # No claim was taken for a resize: the node's usage is recounted from its rows.
            if host:
                node_q.recompute_usage(session, host)

        self._finish(context, container_uuid, "resize", values, task, extra=recount)

    def container_update(self, context: RequestContext, container_uuid: str,
                         cpu: float | None = None, memory: str | None = None) -> dict[str, Any]:
        """Apply new limits live (the API already stored and claimed them)."""
        row = self._load_for_call(container_uuid)
        self.driver.update(row, cpu=cpu, memory=memory)
        return {"uuid": container_uuid, "cpu": cpu if cpu is not None else row.cpu,
                "memory": memory if memory is not None else row.memory}

    # --- show and I/O (calls) -------------------------------------------------------------

    def container_show(self, context: RequestContext, container_uuid: str) -> dict[str, Any]:
        """The row's status fields refreshed from the engine, saved when they changed (so
        that a list shows what a show showed)."""
        row = self._load_for_call(container_uuid)
        current = {"status": row.status, "status_reason": row.status_reason,
                   "status_detail": row.status_detail, "addresses": row.addresses,
                   "container_id": row.container_id}
        if row.task_state or row.status in (consts.CREATING, consts.DELETING, consts.DELETED):
            return _public(current)
        try:
            fresh = self._engine_fields(row)
        except exception.ZunException as exc:
            if not is_not_found(exc):
                raise
            if row.status == consts.ERROR:
                # Already failed (the engine refused the create, say): the stored reason says
                # why; "missing in the engine" would only hide it.
                return _public(current)
            fresh = dict(current)
            if row.auto_remove:
                fresh.update(status=consts.DELETED, status_reason=None, status_detail=None)
            else:
                fresh.update(status=consts.ERROR, status_reason=REASON_NOT_IN_ENGINE,
                             status_detail=None)
        changed = {k: v for k, v in fresh.items() if current.get(k) != v}
        if changed:
            with engine.transaction() as session:
                node_q.cas_update(session, container_uuid, changed, task_states=(None,),
                                  statuses=(row.status,))
        return _public(fresh)

    def container_logs(self, context: RequestContext, container_uuid: str, stdout: bool = True,
                       stderr: bool = True, timestamps: bool = False,
                       tail: str | int | None = "all", since: Any = None) -> str:
        row = self._load_for_call(container_uuid)
        return self.driver.logs(row, stdout=stdout, stderr=stderr, timestamps=timestamps,
                                tail=tail, since=since)

    def container_exec(self, context: RequestContext, container_uuid: str,
                       command: list[str] | str, run: bool = True,
                       interactive: bool = False) -> dict[str, Any]:
        """``run``: the command's output and exit code (bounded by [docker]/execute_timeout).
        Otherwise an exec instance is created, recorded with a fresh token, and its id given
        back for the console proxy."""
        row = self._load_for_call(container_uuid)
        if run:
            result = self.driver.execute(row, command, interactive=False)
            return {"output": result["output"], "exit_code": result["exit_code"],
                    "exec_id": None, "token": None}
        exec_id = self.driver.execute_create(row, command, interactive=bool(interactive))
        # The exec_instance row keeps only a digest of the token (zun.console.tokens).
        token = console_tokens.issue_exec_token(container_uuid, exec_id)
        return {"output": None, "exit_code": None, "exec_id": exec_id, "token": token}

    def container_exec_resize(self, context: RequestContext, container_uuid: str,
                              exec_id: str, height: int | None = None,
                              width: int | None = None) -> None:
        self._load_for_call(container_uuid)
        try:
            self.driver.execute_resize(exec_id, height, width)
        except exception.ZunException as exc:
            if is_not_found(exc):
                raise exception.Invalid(
                    message=f"Exec instance {exec_id} of container {container_uuid} could "
                            "not be found.") from None
            raise

    def container_attach(self, context: RequestContext, container_uuid: str) -> dict[str, Any]:
        """A new console token for the container (the console proxy checks it)."""
        self._load_for_call(container_uuid)
        token = console_tokens.issue_attach_token(container_uuid)
        return {"token": token, "url": proxy_url(container_uuid, token)}

    def container_resize(self, context: RequestContext, container_uuid: str,
                         height: int | None = None, width: int | None = None) -> None:
        self.driver.resize(self._load_for_call(container_uuid), height, width)

    def container_top(self, context: RequestContext, container_uuid: str,
                      ps_args: str | None = None) -> dict[str, Any]:
        return self.driver.top(self._load_for_call(container_uuid), ps_args)

    def container_get_archive(self, context: RequestContext, container_uuid: str,
                              path: str) -> dict[str, Any]:
        data, stat = self.driver.get_archive(self._load_for_call(container_uuid), path)
        return {"data": base64.b64encode(data).decode("ascii"), "stat": stat}

    def container_put_archive(self, context: RequestContext, container_uuid: str, path: str,
                              data_b64: str) -> None:
        row = self._load_for_call(container_uuid)
        try:
            data = base64.b64decode(data_b64, validate=True)
        except (binascii.Error, ValueError, TypeError):
            raise exception.Base64Exception() from None
        self.driver.put_archive(row, path, data)

    def container_stats(self, context: RequestContext, container_uuid: str) -> dict[str, Any]:
        return self.driver.stats(self._load_for_call(container_uuid))

    # --- commit ---------------------------------------------------------------------------

    def container_commit(self, context: RequestContext, container_uuid: str, repository: str,
                         tag: str | None = None, image_uuid: str | None = None) -> None:
        self.submit(context, container_uuid, self._do_commit, repository, tag, image_uuid)

    def _do_commit(self, context: RequestContext, container_uuid: str, repository: str,
                   tag: str | None, image_uuid: str | None) -> None:
        row = self._load(container_uuid)
        if row is None:
            return
        self._start_event(context, container_uuid, "commit")
        task = (CONTAINER_COMMITTING, None)
        tag = tag if tag not in (None, "", "None") else "latest"
        try:
            image_id = self.driver.commit(row, repository, tag)
            size = call(self.driver.client.inspect_image, image_id).get("Size")
        except Exception as exc:
            LOG.warning("Commit of container %s failed: %s", container_uuid, reason_of(exc))

            def forget(session: Any) -> None:
                if image_uuid:
                    node_q.delete_image_by_uuid(session, image_uuid)

            self._finish(context, container_uuid, "commit", {"task_state": None}, task,
                         exc=exc, extra=forget)
            return

        def record(session: Any) -> None:
            if image_uuid:
                node_q.update_image_by_uuid(session, image_uuid,
                                            {"image_id": image_id, "size": str(size)})

        self._finish(context, container_uuid, "commit", {"task_state": None}, task,
                     extra=record)

    # --- networks -------------------------------------------------------------------------

    def network_attach(self, context: RequestContext, container_uuid: str, network: str,
                       fixed_ip: str | None = None) -> None:
        self.submit(context, container_uuid, self._do_network, "network_attach",
                    consts.NETWORK_ATTACHING, network, fixed_ip)

    def network_detach(self, context: RequestContext, container_uuid: str,
                       network: str) -> None:
        self.submit(context, container_uuid, self._do_network, "network_detach",
                    consts.NETWORK_DETACHING, network, None)

    def _do_network(self, context: RequestContext, container_uuid: str, action: str,
                    task_state: str, network: str, fixed_ip: str | None) -> None:
        row = self._load(container_uuid)
        if row is None:
            return
        self._start_event(context, container_uuid, action)
        ref = self.driver.engine_ref(row)
        try:
            if action == "network_attach":
                network_access.check_joinable(context.is_admin, row.project_id, [network])
                docker_network.connect(self.docker, ref, network, ip=fixed_ip or None)
            else:
                docker_network.disconnect(self.docker, ref, network)
            info = self.driver.inspect(row)
            values: dict[str, Any] = {
                "addresses": net_addresses.addresses_from_inspect(info), "task_state": None}
        except Exception as exc:
            LOG.warning("%s of %s to %s failed: %s", action, container_uuid, network,
                        reason_of(exc))
            self._finish(context, container_uuid, action, {"task_state": None},
                         (task_state, None), exc=exc)
            return
        self._finish(context, container_uuid, action, values, (task_state, None))

    def network_list(self, context: RequestContext, container_uuid: str) -> list[dict[str, Any]]:
        info = self.driver.inspect(self._load_for_call(container_uuid))
        return net_addresses.network_list_entries(net_addresses.addresses_from_inspect(info))

    # --- security groups: Neutron's, not available on Docker bridge networks --------------

    def add_security_group(self, context: RequestContext, container_uuid: str,
                           security_group: str | None = None) -> None:
        docker_network.check_security_groups([security_group or "?"])

    def remove_security_group(self, context: RequestContext, container_uuid: str,
                              security_group: str | None = None) -> None:
        docker_network.check_security_groups([security_group or "?"])


def _public(values: dict[str, Any]) -> dict[str, Any]:
    return {k: values.get(k) for k in ("status", "status_reason", "status_detail",
                                       "addresses")}


def build_endpoint(host: str) -> ContainerManager:
    """The object zun-compute serves for container methods (see zun.compute.agent)."""
    return ContainerManager(host)
