"""The API side of capsules: rows, scheduling, claims, audit and the casts to the node.

* create: the capsule row (``container_type`` 1, image ``[DEFAULT]/sandbox_image``) and one row
  per member are inserted in one transaction (``Creating``); the scheduler then claims the
  members' resources atomically on one host, the ``create`` action is recorded and
  ``capsule_create`` is cast. No host: the capsule and its members go to ``Error`` "There are
  not enough hosts available." (202, as in Zun). A failed cast gives the claim back and leaves
  ``Error`` with the reason.
* delete: no state check (as in Zun). Without a host the rows go at once; otherwise the host
  must be up (409 naming it, where Zun answered an obfuscated 500), the capsule is marked
  ``Deleting``/``container_deleting`` and ``capsule_delete`` is cast.

Quota: capsules are not counted, as in Zun: ``zun.compute.quota`` derives a project's usage from
its plain containers only, so checking a capsule against limits its own kind never uses would
refuse nothing meaningful (docs/compatibility.md, "Capsules").

The claim is the sum of the members' cpu and memory (init containers included): that is what
the node's periodic inventory counts for the host, so claims and recounts agree.
"""

from __future__ import annotations

import logging
from typing import Any

from oslo_utils import uuidutils

from zun.common import consts, exception
from zun.common.context import RequestContext
from zun.compute import rpcapi_capsules
from zun.compute.capsule_plan import CapsulePlan, member_name
from zun.conf import CONF
from zun.db import engine, models
from zun.db.queries import actions as action_q
from zun.db.queries import attempts as attempt_q
from zun.db.queries import capsules as capsule_q
from zun.scheduler import claims, filters, placement, scheduler

LOG = logging.getLogger(__name__)

UNEXPECTED_REASON = "Unexpected exception occurred."


def _sandbox_image() -> tuple[str, str]:
    image = CONF.sandbox_image
    driver = CONF.sandbox_image_driver
    return str(image), str(driver)


def _rows(
    context: RequestContext, plan: CapsulePlan, uuid: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    image, image_driver = _sandbox_image()
    capsule = {
        "uuid": uuid,
        "name": plan.name,
        "image": image,
        "image_driver": image_driver,
        "project_id": context.project_id,
        "user_id": context.user_id,
        "status": consts.CREATING,
        "task_state": None,
        "labels": plan.labels,
        "annotations": plan.annotations,
        "restart_policy": dict(plan.restart_policy),
        "cpu": plan.cpu,
        "memory": plan.memory,
        "interactive": False,
        "tty": False,
        "container_type": consts.TYPE_CAPSULE,
    }
    ident = plan.name or uuid
    members = []
    for member in plan.members:
        members.append(
            {
                **member.row_values(),
                "uuid": uuidutils.generate_uuid(),
                "name": member_name(ident),
                "project_id": context.project_id,
                "user_id": context.user_id,
                "status": consts.CREATING,
                "task_state": None,
                "auto_remove": False,
                "auto_heal": False,
                "privileged": False,
                "disk": 0,
                "container_type": (
                    consts.TYPE_CAPSULE_INIT_CONTAINER
                    if member.init
                    else consts.TYPE_CAPSULE_CONTAINER
                ),
            }
        )
    return capsule, members


def _volume_requests(plan: CapsulePlan, member_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cast's ``volumes``: each declared volume with the members that mount it."""
    requests = []
    for volume in plan.volumes:
        mounts = [
            {"container_uuid": row["uuid"], "mount_path": path, "read_only": read_only}
            for member, row in zip(plan.members, member_rows, strict=True)
            for name, path, read_only in member.mounts
            if name == volume.name
        ]
        requests.append(
            {
                "name": volume.name,
                "size": volume.size,
                "volume_id": volume.volume_id,
                "auto_remove": volume.auto_remove,
                "mounts": mounts,
            }
        )
    return requests


def claim_amount(member_rows: list[dict[str, Any]]) -> tuple[float, int]:
    cpu, memory = 0.0, 0
    for row in member_rows:
        member_cpu, member_memory, _ = claims.container_resources(
            row.get("cpu"), row.get("memory"), None
        )
        cpu += member_cpu
        memory += member_memory
    return cpu, memory


class CapsuleAPI:
    """Capsule operations for the REST handlers."""

    def __init__(self, rpcapi: rpcapi_capsules.CapsuleRPCAPI | None = None) -> None:
        self._rpcapi = rpcapi

    @property
    def rpcapi(self) -> rpcapi_capsules.CapsuleRPCAPI:
        return self._rpcapi or rpcapi_capsules.get_rpcapi()

    # --- create -----------------------------------------------------------------------------

    def create(self, context: RequestContext, plan: CapsulePlan) -> str:
        """Insert, schedule, claim, record and cast; returns the capsule's UUID."""
        uuid = uuidutils.generate_uuid()
        capsule_values, member_values = _rows(context, plan, uuid)
        with engine.transaction() as session:
            capsule_id = capsule_q.insert(session, capsule_values, member_values).id
        cpu, memory = claim_amount(member_values)
        request = filters.Request(
            cpu=cpu,
            memory_mb=memory,
            disk_gb=0,
            availability_zone=plan.availability_zone,
            project_id=capsule_values.get("project_id"),
        )
        consumer = placement.consumer_of(
            uuid,
            context.project_id,
            context.user_id,
            placement.resources_of(cpu, memory, 0),
            new=True,
        )
        volumes = _volume_requests(plan, member_values)
        try:
            host = self._schedule(context, uuid, capsule_id, request, consumer, volumes)
        except exception.NoValidHost:
            self._mark_error(capsule_id, scheduler.NO_VALID_HOST_REASON)
            return uuid
        except exception.PlacementUnavailable:
            # A 503 the client can retry: it never learns this UUID, so nothing may stay.
            with engine.transaction() as session:
                current = capsule_q.get_by_uuid(session, uuid)
                if current is not None:
                    capsule_q.destroy(session, current)
            raise
        except Exception:
            LOG.exception("Scheduling capsule %s failed", uuid)
            self._mark_error(capsule_id, UNEXPECTED_REASON)
            raise
        try:
            self.rpcapi.capsule_create(context, host, uuid, volumes=volumes)
        except Exception as exc:
            LOG.exception("Sending capsule_create for %s to %s failed", uuid, host)
            with engine.transaction() as session:
                capsule_q.update_all(
                    session,
                    capsule_id,
                    {
                        "status": consts.ERROR,
                        "task_state": None,
                        "host": None,
                        "status_reason": f"The create request could not be sent to host {host}: "
                        f"{exc}",
                    },
                )
                claims.release(session, host, cpu, memory)
                action_q.finish_action(session, uuid, context.request_id, error=True)
                placement.release_after_commit(session, uuid)
            raise
        return uuid

    @engine.retry_on_deadlock
    def _schedule(
        self,
        context: RequestContext,
        uuid: str,
        capsule_id: int,
        request: filters.Request,
        consumer: placement.Consumer | None = None,
        volumes: list[dict[str, Any]] | None = None,
    ) -> str:
        with engine.transaction() as session:
            host = scheduler.select_and_claim(session, request, consumer=consumer)
            capsule_q.update_all(session, capsule_id, {"host": host})
            capsule_q.set_task(session, uuid, {"task_state": consts.CONTAINER_CREATING})
            action = action_q.start_action(session, context, uuid, "create")
            # The cast's arguments, kept with the attempt: a node that restarts with the cast
            # still queued (or lost) creates the capsule from them instead of failing it.
            attempt_q.record(
                session,
                action.id,
                host,
                1,
                {"volumes": list(volumes or []), "is_admin": context.is_admin},
            )
        return host

    @staticmethod
    def _mark_error(capsule_id: int, reason: str) -> None:
        with engine.transaction() as session:
            capsule_q.update_all(
                session,
                capsule_id,
                {"status": consts.ERROR, "status_reason": reason, "task_state": None},
            )

    # --- lookups ----------------------------------------------------------------------------

    @staticmethod
    def get(context: RequestContext, ident: str) -> models.Container:
        with engine.transaction(readonly=True) as session:
            return capsule_q.get_by_ident(session, context, ident)

    # --- delete -----------------------------------------------------------------------------

    def delete(self, context: RequestContext, capsule: models.Container) -> None:
        """204 at once without a host; otherwise mark it and let the node remove it."""
        if not capsule.host:
            with engine.transaction() as session:
                current = capsule_q.get_by_uuid(session, capsule.uuid)
                if current is None:
                    return
                if not current.host:
                    capsule_q.destroy(session, current)
                    return
            capsule = current  # scheduled meanwhile: the node holds it now
        # Checked before any bus is needed: a known-dead host is a 409 wherever we run.
        host = rpcapi_capsules.CapsuleRPCAPI.require_up(capsule.host, capsule.uuid)
        before = {"status": capsule.status, "task_state": capsule.task_state}
        with engine.transaction() as session:
            changed = capsule_q.set_task(
                session,
                capsule.uuid,
                {"status": consts.DELETING, "task_state": consts.CONTAINER_DELETING},
            )
            if not changed:
                return  # deleted meanwhile
            action_q.start_action(session, context, capsule.uuid, "delete")
        try:
            self.rpcapi.capsule_delete(context, host, capsule.uuid)
        except Exception:
            with engine.transaction() as session:
                capsule_q.set_task(session, capsule.uuid, before)
                action_q.finish_action(session, capsule.uuid, context.request_id, error=True)
            raise


_API: CapsuleAPI | None = None


def get_api() -> CapsuleAPI:
    global _API
    if _API is None:
        _API = CapsuleAPI()
    return _API
