"""The node side of capsules: ``CapsuleEndpoint``, served by zun-compute next to the container
manager (RPC methods ``capsule_create`` and ``capsule_delete``, both casts).

A capsule on the engine is:

* a **sandbox** container ``zun-<capsule uuid>`` (labels ``zun.container.uuid`` = the capsule's
  UUID, ``zun.capsule.uuid``, ``zun.host``), on the project's bridge network, with a shareable
  IPC namespace, the capsule's hostname and every member's exposed port. It runs
  ``[DEFAULT]/sandbox_image`` (``kubernetes/pause``). When that image is not on the node and
  ``[DEFAULT]/sandbox_image_pull_policy`` does not allow pulling it (``never``), the sandbox runs
  ``[DEFAULT]/sandbox_fallback_image`` (``busybox:latest``, never pulled) with
  ``[DEFAULT]/sandbox_fallback_command`` (a shell that sleeps until stopped); an empty fallback
  image turns the fallback off.
* **init containers**, created and run one at a time, in template order, each to completion
  (``[DEFAULT]/capsule_init_timeout`` seconds, 3600); one ending with a non-zero code is run
  again up to its restart policy's ``MaximumRetryCount`` times when that policy is
  ``on-failure``; a final failure makes the capsule ``Error`` with the reason.
* **containers**, created then started in template order.

Members join the sandbox's network and IPC namespaces (``network_mode`` and ``ipc_mode``
``container:<sandbox>``), so they share its addresses, which become the capsule's (and the
members') ``addresses``. Volumes: a template volume with ``size`` is a new Docker ``local``
volume named with a fresh UUID (so that, when it outlives the capsule, it can be named by
``volumeID`` later); ``autoRemove`` ones go with the capsule. ``volumeID`` names an existing
volume of the project. ``readOnly`` mounts are read-only. The engine is driven through the
runtime (:mod:`zun.runtime.contract`), volumes through :mod:`zun.volume.local`.

Statuses keep Zun's strings (clients compare them); the Kubernetes-like phases of
``consts.CAPSULE_STATUSES`` (:mod:`zun.compute.capsule_phase`) decide them: the capsule is
``Creating`` while ``Pending`` (sandbox, init containers), then ``Running``. The container
endpoint's periodic sync maps the sandbox's state onto the capsule row and each
member's engine state onto its row, as Zun did; this endpoint's periodic
:meth:`CapsuleEndpoint.update_phases` stops the sandbox of a capsule that ended (``Succeeded``
or ``Failed``), which leaves it ``Stopped`` with the phase as ``status_reason``.

Every failure leaves the capsule ``Error`` with the reason and without a host, its members
``Error`` (those that had ended keep ``Stopped``), and nothing on the node: engine containers
and volumes made for the capsule are swept by their ``zun.capsule.uuid`` label, the project
network is removed when unused, and the claim is given back.
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zun.common import consts, exception
from zun.common.context import RequestContext
from zun.compute import relocation
from zun.compute.capsule_phase import PHASE_STATUS, capsule_phase, exit_code
from zun.compute.node_plumbing import NodePlumbing
from zun.conf import CONF
from zun.db import engine
from zun.db.queries import actions as action_q
from zun.db.queries import attempts as attempt_q
from zun.db.queries import capsules as capsule_q
from zun.db.queries import containers as container_q
from zun.db.queries import node as node_q
from zun.image import docker_driver as image_driver
from zun.image import policy as image_policy
from zun.image.service import ImageService
from zun.network import addresses as net_addresses
from zun.network import docker_network, kuryr_network, kuryr_networks, mode
from zun.network import neutron as neutron_api
from zun.runtime.contract import ContainerRuntime
from zun.runtime.docker import spec as spec_mod
from zun.runtime.docker.client import is_not_found
from zun.runtime.docker.status import map_docker_state
from zun.scheduler import claims, placement
from zun.volume import local as local_volume

LOG = logging.getLogger(__name__)

LABEL_HOST = "zun.host"
LABEL_CAPSULE = local_volume.LABEL_CAPSULE
DEFAULT_MAX_WORKERS = 8
# PID 1 of the fallback sandbox: sleeps until SIGTERM/SIGINT, then exits at once.
DEFAULT_FALLBACK_COMMAND = ["sh", "-c", 'trap "exit 0" TERM INT; sleep 2147483647 & wait']
REASON_INTERRUPTED = "Capsule failed to create correctly"


class InitContainerFailed(exception.ZunException):
    message = "Init container %(name)s %(why)s"
    code = 500


def _event(action: str) -> str:
    return f"compute__do_capsule_{action}"


reason_of = exception.status_reason


def _fallback_command() -> list[str]:
    value = CONF.sandbox_fallback_command
    if not value:
        return list(DEFAULT_FALLBACK_COMMAND)
    return shlex.split(value) if isinstance(value, str) else [str(v) for v in value]


def _engine(engine_id: str) -> dict[str, str]:
    """An engine container known by its id, as the runtime takes it."""
    return {"container_id": engine_id}


@dataclass
class _Built:
    """What a create made so far (engine ids by member UUID)."""

    sandbox_id: str | None = None
    engine_ids: dict[str, str] = field(default_factory=dict)
    touched_network: bool = False
    # kuryr: the sandbox's Neutron addresses (members share its network namespace)
    addresses: dict[str, Any] | None = None


class CapsuleEndpoint(NodePlumbing):
    """RPC endpoint for capsule methods on one host."""

    def __init__(
        self,
        host: str,
        driver: ContainerRuntime | None = None,
        state_dir: str | Path | None = None,
        max_workers: int | None = None,
    ) -> None:
        super().__init__(host, driver, state_dir, max_workers or DEFAULT_MAX_WORKERS, "zun-capsule")
        self.images = ImageService(host, lambda: self.driver.client)

    # --- plumbing ---------------------------------------------------------------------------

    def periodic_tasks(self) -> list[tuple[Callable[[RequestContext], Any], float, bool]]:
        spacing = float(CONF.sync_container_state_interval)
        return [(self.update_phases, spacing, False)]

    # --- phases of running capsules -------------------------------------------------------

    def update_phases(self, context: RequestContext) -> dict[str, str]:
        """The phase of each settled ``Running`` capsule of this host (one query, one engine
        list); a capsule that ended gets its sandbox stopped and ``Stopped`` with the reason
        ``Succeeded`` or ``Failed: container <name> exited with code N``. Returns the phases."""
        with engine.transaction(readonly=True) as session:
            running = [
                c
                for c in capsule_q.host_capsules(session, self.host)
                if c.status == consts.RUNNING
                and c.task_state is None
                and not self.workers.busy(c.uuid)
            ]
            members = capsule_q.member_view_rows(session, [c.id for c in running])
        if not running:
            return {}
        listed = self.driver.list_labelled(LABEL_HOST, self.host)
        states = {(c.get("Labels") or {}).get(consts.LABEL_CONTAINER_UUID): c for c in listed}
        uuid_at, name_at = container_q.ROW_INDEX["uuid"], container_q.ROW_INDEX["name"]
        type_at = len(container_q.ROW_KEYS) + 1
        phases = {}
        for capsule in running:
            seen: dict[int, list[tuple[str | None, int | None, str]]] = {
                consts.TYPE_CAPSULE_INIT_CONTAINER: [],
                consts.TYPE_CAPSULE_CONTAINER: [],
            }
            for row in members[capsule.id]:
                found = states.get(row[uuid_at])
                if found is None:
                    seen[row[type_at]].append((consts.ERROR, None, row[name_at]))
                    continue
                status = map_docker_state(found.get("State"), status=consts.CREATED).status
                seen[row[type_at]].append((status, exit_code(found.get("Status")), row[name_at]))
            inits = seen[consts.TYPE_CAPSULE_INIT_CONTAINER]
            regular = seen[consts.TYPE_CAPSULE_CONTAINER]
            phase = capsule_phase(
                [(s, c) for s, c, _ in inits],
                [(s, c) for s, c, _ in regular],
                (capsule.restart_policy or {}).get("Name"),
            )
            phases[capsule.uuid] = phase
            if phase in (consts.CAPSULE_SUCCEEDED, consts.CAPSULE_FAILED):
                self._finish_capsule(capsule, phase, [*inits, *regular])
        return phases

    def _finish_capsule(
        self, capsule: Any, phase: str, members: Sequence[tuple[str | None, int | None, str]]
    ) -> None:
        reason = "Succeeded"
        if phase == consts.CAPSULE_FAILED:
            failed = next(
                (
                    (name, code)
                    for status, code, name in members
                    if status == consts.ERROR or code not in (0, None)
                ),
                None,
            )
            reason = (
                "Failed"
                if failed is None
                else f"Failed: container {failed[0]} exited with code {failed[1]}"
            )
        try:
            self.driver.stop(
                {"uuid": capsule.uuid, "container_id": capsule.container_id}, timeout=5
            )
        except exception.ZunException as exc:
            if not is_not_found(exc):
                LOG.warning("Could not stop the sandbox of capsule %s: %s", capsule.uuid, exc)
                return
        LOG.info("Capsule %s ended: %s", capsule.uuid, reason)
        with engine.transaction() as session:
            container_q.cas_update(
                session,
                capsule.uuid,
                {"status": PHASE_STATUS[phase], "status_reason": reason},
                task_states=(None,),
                statuses=(consts.RUNNING,),
                host=self.host,
            )

    def _submit(
        self, context: RequestContext, capsule_uuid: str, fn: Callable[..., None], *args: Any
    ) -> Any:
        def job() -> None:
            context.update_store()
            try:
                fn(context, capsule_uuid, *args)
            except Exception:
                LOG.exception("%s of capsule %s failed", fn.__name__, capsule_uuid)

        return self.workers.submit(capsule_uuid, job)

    @staticmethod
    def _event(
        context: RequestContext,
        capsule_uuid: str,
        action: str,
        exc: BaseException | None = None,
        start: bool = False,
    ) -> None:
        if not context.request_id:
            return
        with engine.transaction() as session:
            if start:
                action_q.start_event(session, capsule_uuid, context.request_id, _event(action))
                return
            action_q.finish_event(
                session,
                capsule_uuid,
                context.request_id,
                _event(action),
                result=action_q.RESULT_ERROR if exc else action_q.RESULT_SUCCESS,
                traceback="".join(traceback.format_exception(exc)) if exc else None,
            )

    # --- start-up recovery ------------------------------------------------------------------

    def init_host(self, context: RequestContext) -> None:
        """Finish what a stop interrupted, before the container endpoint looks at the rows:
        a capsule to be created on this host is created again from its stored request (the
        node died in its middle, or before even receiving the cast, which may still be
        queued: it then finds the capsule done), one without a stored request is undone
        (``Error``), one being deleted is deleted."""
        with engine.transaction(readonly=True) as session:
            rows = capsule_q.host_capsules(session, self.host)
        for row in rows:
            try:
                if row.status == consts.DELETING or row.task_state == consts.CONTAINER_DELETING:
                    self._do_delete(context, row.uuid)
                elif (
                    row.status == consts.CREATING
                    and row.task_state == consts.CONTAINER_CREATING
                    and self._redo_create(row)
                ):
                    continue
                elif row.status == consts.CREATING or row.task_state in (
                    consts.CONTAINER_CREATING,
                    consts.IMAGE_PULLING,
                ):
                    LOG.warning("Capsule %s was being created when the node stopped", row.uuid)
                    self._fail(context, row, REASON_INTERRUPTED, None)
            except Exception:
                LOG.exception("Recovery of capsule %s failed", row.uuid)

    def _redo_create(self, row: Any) -> bool:
        """Queue the create again from the request stored with its attempt on this host;
        False when there is none (a capsule made before requests were stored)."""
        with engine.transaction(readonly=True) as session:
            attempt = attempt_q.latest(session, row.uuid)
        if (
            attempt is None
            or not attempt.hosts
            or attempt.hosts[-1] != self.host
            or "volumes" not in attempt.request
        ):
            return False
        # What a first try left goes first (nothing when the cast never arrived).
        self._sweep(row.uuid, row.project_id)
        with engine.transaction() as session:
            node_q.delete_volume_records(session, row.uuid)
        LOG.warning("Capsule %s was to be created when the node stopped: creating it now", row.uuid)
        self._submit(
            relocation.replay_context(attempt),
            row.uuid,
            self._do_create,
            list(attempt.request["volumes"]),
        )
        return True

    # --- images -----------------------------------------------------------------------------

    def _pull(self, row: Any, image: str, pull_policy: str | None, **known: Any) -> str:
        return self.images.pull_for(
            image,
            policy=pull_policy,
            project_id=row.project_id,
            user_id=row.user_id,
            driver_name=consts.IMAGE_DRIVER_DOCKER,
            **known,
        )

    def sandbox_image(self, context: RequestContext, capsule: Any) -> tuple[str, list[str] | None]:
        """The sandbox's image reference and command (None: the image's own)."""
        driver = capsule.image_driver or consts.IMAGE_DRIVER_DOCKER
        if driver != consts.IMAGE_DRIVER_DOCKER:
            raise exception.OperationNotSupported(
                message=f"Sandbox image driver {driver} is not available on host {self.host}; "
                "set [DEFAULT]/sandbox_image_driver to docker."
            )
        image = capsule.image or CONF.sandbox_image
        policy = image_policy.effective_policy(CONF.sandbox_image_pull_policy)
        repo, tag = image_policy.parse_image_name(image, consts.IMAGE_DRIVER_DOCKER)
        ref = image_driver.image_ref(repo, tag)
        present = self.images.inspect(ref)
        if present is None and not image_policy.should_pull(policy, False):
            fallback = CONF.sandbox_fallback_image
            if fallback and self.images.inspect(fallback) is not None:
                LOG.info(
                    "Sandbox image %s is absent and may not be pulled (%s): capsule %s uses %s",
                    ref,
                    policy,
                    capsule.uuid,
                    fallback,
                )
                return fallback, _fallback_command()
            raise exception.ImageNotFound(
                message=f"Sandbox image {ref} is not on host {self.host}, the sandbox image "
                f"pull policy '{policy}' does not allow pulling it, and the fallback "
                f"image {fallback or '(none)'} is not there either."
            )
        # The inspection above is the pull's: an image is inspected once before a pull.
        return self._pull(capsule, image, policy, present=present), None

    # --- engine containers ------------------------------------------------------------------

    def _create_engine(
        self,
        values: dict[str, Any],
        image_ref: str,
        networking: dict[str, Any] | None,
        mounts: list[Any] | None,
        extra_host_config: dict[str, Any],
    ) -> str:
        return self.driver.create(
            values,
            image_ref,
            networking,
            mounts=mounts or None,
            extra_host_config=extra_host_config,
        )

    def _labels(self, capsule_uuid: str, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {**(extra or {}), LABEL_HOST: self.host, LABEL_CAPSULE: capsule_uuid}

    def _create_sandbox(
        self, context: RequestContext, capsule: Any, members: Sequence[Any], built: _Built
    ) -> str:
        image_ref, command = self.sandbox_image(context, capsule)
        ports: dict[str, Any] = {}
        for member in members:
            ports.update(member.exposed_ports or {})
        values = {
            "uuid": capsule.uuid,
            "command": command,
            "labels": self._labels(capsule.uuid, capsule.labels),
            "hostname": (capsule.name or capsule.uuid)[:63],
            "exposed_ports": ports or None,
        }
        if mode.kuryr_enabled():
            built.sandbox_id = self._create_engine(
                values,
                image_ref,
                self._neutron_networking(capsule, ports, built),
                None,
                {"ipc_mode": "shareable"},
            )
            self.driver.start(_engine(built.sandbox_id))
            return built.sandbox_id
        project = capsule.project_id or "default"
        with docker_network.project_network_lock(self.driver.engine, project):
            # Held until the sandbox is on the network, so no cleanup removes it meanwhile.
            network = docker_network.ensure_project_network_locked(self.driver.engine, project).name
            built.touched_network = True
            built.sandbox_id = self._create_engine(
                values,
                image_ref,
                {"network_mode": network, "endpoints": {network: {}}},
                None,
                {"ipc_mode": "shareable"},
            )
        self.driver.start(_engine(built.sandbox_id))
        return built.sandbox_id

    def _neutron_networking(
        self, capsule: Any, exposed: dict[str, Any], built: _Built
    ) -> dict[str, Any]:
        """kuryr: the sandbox's port on the project's network (the original's default
        choice: a template has no ``nets``), its exposed ports as a security group. What is
        made carries the capsule's UUID as device (or the group's name), which is how
        :meth:`_release_network` finds it again."""
        neutron = neutron_api.for_service()
        taken = kuryr_network.PortsTaken()
        network = neutron.available_network(capsule.project_id)
        groups = list(capsule.security_groups) if capsule.security_groups else None
        if exposed:
            group = kuryr_network.expose_ports(
                neutron, capsule.uuid, capsule.project_id, exposed, taken
            )
            groups = [*(groups or []), group]
        port = kuryr_network.take_port(
            neutron,
            capsule.uuid,
            capsule.project_id,
            {"network": network["id"], "preserve_on_delete": False},
            groups,
            taken,
        )
        net_id = str(port["network_id"])
        kuryr_networks.ensure(
            self.driver.engine,
            neutron,
            net_id,
            kuryr_networks.Owner(self.host, capsule.project_id, capsule.user_id),
        )
        addrs = kuryr_network.addresses_of(port, False)
        built.addresses = {net_id: addrs}
        return {
            "network_mode": net_id,
            "endpoints": {net_id: kuryr_network.endpoint_of(addrs)},
            "mac_address": port.get("mac_address"),
            "publish": False,
        }

    def _create_member(
        self, context: RequestContext, capsule: Any, member: Any, mounts: list[Any], built: _Built
    ) -> str:
        image_ref = self._pull(member, member.image, member.image_pull_policy)
        values = member.as_dict()
        # A member whose template asks for no resources still runs with limits: the
        # configured defaults, as a container does (the claim counts what was asked for).
        if not values.get("cpu"):
            values["cpu"] = float(CONF.default_cpu)
        if not values.get("memory"):
            values["memory"] = str(CONF.default_memory)
        values["exposed_ports"] = None  # published on the sandbox, which owns the network
        values["labels"] = self._labels(capsule.uuid)
        if member.container_type == consts.TYPE_CAPSULE_INIT_CONTAINER:
            values["restart_policy"] = None  # run once here; retries are ours
        namespace = f"container:{built.sandbox_id}"
        engine_id = self._create_engine(
            values, image_ref, None, mounts, {"network_mode": namespace, "ipc_mode": namespace}
        )
        built.engine_ids[member.uuid] = engine_id
        return engine_id

    def _run_init(self, member: Any, engine_id: str) -> None:
        timeout = int(CONF.capsule_init_timeout)
        policy = member.restart_policy or {}
        retries = (
            int(policy.get("MaximumRetryCount") or 0) if policy.get("Name") == "on-failure" else 0
        )
        for attempt in range(retries + 1):
            self.driver.start(_engine(engine_id))
            code = self.driver.wait_stopped(_engine(engine_id), timeout)
            if code is None:
                with contextlib.suppress(Exception):
                    self.driver.kill(_engine(engine_id))
                raise InitContainerFailed(
                    name=member.name, why=f"did not finish within {timeout} seconds"
                )
            if code == 0:
                return
            LOG.info(
                "Init container %s exited with %s (attempt %d of %d)",
                member.name,
                code,
                attempt + 1,
                retries + 1,
            )
        raise InitContainerFailed(name=member.name, why=f"exited with code {code}")

    def _member_fields(self, engine_id: str, addresses: dict[str, Any]) -> dict[str, Any]:
        info = self.driver.inspect(_engine(engine_id))
        fields = map_docker_state(info.get("State"), status=consts.CREATING, force=True)
        return {
            "status": fields.status,
            "status_reason": None,
            "status_detail": fields.status_detail,
            "container_id": engine_id,
            "addresses": addresses,
        }

    # --- create -----------------------------------------------------------------------------

    def capsule_create(
        self,
        context: RequestContext,
        capsule_uuid: str,
        volumes: list[dict[str, Any]] | None = None,
    ) -> None:
        self._submit(context, capsule_uuid, self._do_create, list(volumes or []))

    def _do_create(
        self, context: RequestContext, capsule_uuid: str, volumes: list[dict[str, Any]]
    ) -> None:
        with engine.transaction(readonly=True) as session:
            capsule = capsule_q.get_by_uuid(session, capsule_uuid)
            members = [] if capsule is None else capsule_q.members(session, capsule.id)
        if capsule is None or capsule.status != consts.CREATING:
            LOG.info(
                "Not creating capsule %s: it is %s",
                capsule_uuid,
                "gone" if capsule is None else capsule.status,
            )
            return
        self._event(context, capsule_uuid, "create", start=True)
        built = _Built()
        try:
            mounts, records = local_volume.prepare_capsule_mounts(
                self.driver.engine, capsule, volumes, self.host
            )
            with engine.transaction() as session:
                node_q.save_volume_records(session, records)
            self._create_sandbox(context, capsule, members, built)
            inits = [m for m in members if m.container_type == consts.TYPE_CAPSULE_INIT_CONTAINER]
            regular = [m for m in members if m.container_type == consts.TYPE_CAPSULE_CONTAINER]
            for member in inits:
                engine_id = self._create_member(
                    context, capsule, member, mounts.get(member.uuid, []), built
                )
                self._run_init(member, engine_id)
                with engine.transaction() as session:  # Stopped, Exited(0)
                    capsule_q.update_member(
                        session, member.uuid, self._member_fields(engine_id, {})
                    )
            for member in regular:
                self._create_member(context, capsule, member, mounts.get(member.uuid, []), built)
            for member in regular:
                self.driver.start(_engine(built.engine_ids[member.uuid]))
            sandbox = self.driver.inspect(_engine(built.sandbox_id))
            addresses = (
                built.addresses
                if built.addresses is not None
                else net_addresses.addresses_from_inspect(sandbox)
            )
            fields = {
                uuid: self._member_fields(engine_id, addresses)
                for uuid, engine_id in built.engine_ids.items()
            }
        except Exception as exc:
            LOG.warning("Creating capsule %s failed: %s", capsule_uuid, reason_of(exc))
            self._fail(context, capsule, reason_of(exc), exc)
            return
        with engine.transaction() as session:
            won = container_q.cas_update(
                session,
                capsule_uuid,
                {
                    "status": consts.RUNNING,
                    "status_reason": None,
                    "task_state": None,
                    "container_id": built.sandbox_id,
                    "addresses": addresses,
                    "status_detail": None,
                },
                task_states=(consts.CONTAINER_CREATING,),
                statuses=(consts.CREATING,),
                host=self.host,
            )
            if won:
                for member_uuid, values in fields.items():
                    capsule_q.update_member(session, member_uuid, values)
        if won:
            self._event(context, capsule_uuid, "create")
            return
        with engine.transaction(readonly=True) as session:
            gone = capsule_q.get_by_uuid(session, capsule_uuid) is None
        if gone:  # deleted behind our back: nothing of it may stay on the node
            self._sweep(capsule_uuid, capsule.project_id)
        # Otherwise a delete is queued behind this job: it removes what was built.

    def _sweep(self, capsule_uuid: str, project_id: str | None) -> None:
        """Remove every engine container and volume made for the capsule, then the project
        network if nothing else uses it (never raises)."""
        try:
            found = self.driver.list_labelled(LABEL_CAPSULE, capsule_uuid)
        except Exception:
            LOG.warning("Could not list the containers of capsule %s", capsule_uuid, exc_info=True)
            found = []
        # Members first: the sandbox holds their namespaces.
        found.sort(
            key=lambda c: (c.get("Labels") or {}).get(consts.LABEL_CONTAINER_UUID) == capsule_uuid
        )
        for container in found:
            try:
                self.driver.delete(_engine(container["Id"]), force=True)
            except exception.ZunException as exc:
                if not is_not_found(exc):
                    LOG.warning(
                        "Could not remove %s of capsule %s: %s", container["Id"], capsule_uuid, exc
                    )
        try:
            local_volume.remove_capsule_volumes(self.driver.engine, capsule_uuid)
        except exception.ZunException:
            LOG.warning("Could not remove the volumes of capsule %s", capsule_uuid, exc_info=True)
        self._release_network(project_id, capsule_uuid)

    def _release_network(self, project_id: str | None, capsule_uuid: str) -> None:
        if mode.kuryr_enabled():
            # The sandbox's port (device = the capsule) and exposed-ports group; never raises.
            try:
                neutron = neutron_api.for_service()
                kuryr_network.release_ports(
                    neutron, [(p["id"], False) for p in neutron.ports(device_id=capsule_uuid)]
                )
                kuryr_network.remove_exposed_group(neutron, capsule_uuid, project_id)
            except Exception:
                LOG.warning(
                    "Could not release the Neutron port of capsule %s", capsule_uuid, exc_info=True
                )
            return
        project = project_id or "default"
        try:
            with docker_network.project_network_lock(self.driver.engine, project):
                docker_network.remove_project_network_if_unused_locked(self.driver.engine, project)
        except Exception:
            LOG.warning("Could not remove the network of project %s", project, exc_info=True)

    def _fail(
        self, context: RequestContext, capsule: Any, reason: str, exc: BaseException | None
    ) -> None:
        """Error state for a create that cannot complete; the node keeps nothing of it."""
        self._sweep(capsule.uuid, capsule.project_id)
        host = capsule.host
        with engine.transaction() as session:
            won = container_q.cas_update(
                session,
                capsule.uuid,
                {
                    "status": consts.ERROR,
                    "status_reason": reason,
                    "task_state": None,
                    "host": None,
                    "container_id": None,
                    "addresses": None,
                    "status_detail": None,
                },
                task_states=(consts.CONTAINER_CREATING, consts.IMAGE_PULLING, None),
                statuses=(consts.CREATING,),
                host=self.host,
            )
            if won:
                if host:
                    cpu, memory = capsule_q.member_resources(session, capsule.id)
                    claims.release(session, host, cpu, memory)
                capsule_q.update_members(
                    session,
                    capsule.id,
                    {"status": consts.ERROR, "status_reason": reason},
                    statuses=(consts.CREATING, consts.CREATED, consts.RUNNING),
                )
                capsule_q.update_members(
                    session,
                    capsule.id,
                    {"host": None, "addresses": None, "container_id": None, "task_state": None},
                )
                node_q.delete_volume_records(session, capsule.uuid)
                placement.release_after_commit(session, capsule.uuid)
        self._event(context, capsule.uuid, "create", exc or exception.ZunException(message=reason))

    # --- delete -----------------------------------------------------------------------------

    def capsule_delete(self, context: RequestContext, capsule_uuid: str) -> None:
        self._submit(context, capsule_uuid, self._do_delete)

    def _do_delete(self, context: RequestContext, capsule_uuid: str) -> None:
        with engine.transaction(readonly=True) as session:
            capsule = capsule_q.get_by_uuid(session, capsule_uuid)
        if capsule is None:
            return
        self._event(context, capsule_uuid, "delete", start=True)
        try:
            self._remove_engine_containers(capsule_uuid)
            local_volume.release_container_volumes(self.driver.engine, capsule_uuid, self.state_dir)
        except Exception as exc:
            LOG.warning("Deleting capsule %s failed: %s", capsule_uuid, reason_of(exc))
            with engine.transaction() as session:
                container_q.cas_update(
                    session,
                    capsule_uuid,
                    {"status": consts.ERROR, "status_reason": reason_of(exc), "task_state": None},
                    task_states=(consts.CONTAINER_DELETING, None),
                    host=self.host,
                )
            self._event(context, capsule_uuid, "delete", exc)
            return
        self._release_network(capsule.project_id, capsule_uuid)
        with engine.transaction() as session:
            current = capsule_q.get_by_uuid(session, capsule_uuid)
            if current is None:
                return
            if current.host:
                cpu, memory = capsule_q.member_resources(session, current.id)
                claims.release(session, current.host, cpu, memory)
            capsule_q.destroy(session, current)
            placement.release_after_commit(session, capsule_uuid)

    def _remove_engine_containers(self, capsule_uuid: str) -> None:
        """Members, then the sandbox; a container already gone is fine, a refusal raises."""
        found = self.driver.list_labelled(LABEL_CAPSULE, capsule_uuid)
        found.sort(
            key=lambda c: (c.get("Labels") or {}).get(consts.LABEL_CONTAINER_UUID) == capsule_uuid
        )
        refs = [c["Id"] for c in found] or [spec_mod.engine_name(capsule_uuid)]
        for ref in refs:
            # A container already gone is fine (False); a refusal raises.
            self.driver.delete(_engine(ref), force=True)


def build_endpoint(host: str) -> CapsuleEndpoint:
    """The object zun-compute serves for capsule methods (see zun.compute.agent)."""
    return CapsuleEndpoint(host)
