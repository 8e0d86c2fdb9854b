"""Calls on a container (the API waits for the answer): show, logs, exec, consoles,
archives, top, stats, the networks it is on."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from zun.common import consts, exception
from zun.common.context import RequestContext
from zun.compute import auto_heal
from zun.compute import container_rows as rows
from zun.compute.container_base import ContainerNodeBase
from zun.console import tokens as console_tokens
from zun.db import engine
from zun.db.queries import containers as container_q
from zun.network import addresses as net_addresses
from zun.runtime.docker.client import is_not_found
from zun.runtime.docker.driver import REASON_NOT_IN_ENGINE


class ContainerCalls(ContainerNodeBase):
    """The calls on one container, answered in the RPC thread."""

    # --- show and I/O (calls) -------------------------------------------------------------

    def container_show(self, context: RequestContext, container_uuid: str) -> dict[str, Any]:
        """The row's status fields refreshed from the engine, saved when they changed (so
        that a list shows what a show showed)."""
        row = rows.load_for_call(container_uuid)
        current = {
            "status": row.status,
            "status_reason": row.status_reason,
            "status_detail": row.status_detail,
            "addresses": row.addresses,
            "container_id": row.container_id,
        }
        if row.task_state or row.status in (consts.CREATING, consts.DELETING, consts.DELETED):
            return rows.public(current)
        try:
            fresh = self.engine_fields(row)
        except exception.ZunException as exc:
            if not is_not_found(exc):
                raise
            if auto_heal.heals(row):
                # A read must not write the Error that stops auto_heal: the heal starts now.
                if auto_heal.start(self, context, row):
                    return rows.public(
                        {**current, "status": consts.REBUILDING, "status_reason": None}
                    )
                return rows.public(current)
            if row.status == consts.ERROR:
                # Already failed (the engine refused the create, say): the stored reason says
                # why; "missing in the engine" would only hide it.
                return rows.public(current)
            fresh = dict(current)
            if row.auto_remove:
                fresh.update(status=consts.DELETED, status_reason=None, status_detail=None)
            else:
                fresh.update(
                    status=consts.ERROR, status_reason=REASON_NOT_IN_ENGINE, status_detail=None
                )
        changed = {k: v for k, v in fresh.items() if current.get(k) != v}
        if changed:
            with engine.transaction() as session:
                container_q.cas_update(
                    session,
                    container_uuid,
                    changed,
                    task_states=(None,),
                    statuses=(row.status,),
                    host=self.host,
                )
        return rows.public(fresh)

    def container_logs(
        self,
        context: RequestContext,
        container_uuid: str,
        stdout: bool = True,
        stderr: bool = True,
        timestamps: bool = False,
        tail: str | int | None = "all",
        since: Any = None,
    ) -> str:
        row = rows.load_for_call(container_uuid)
        return self.driver.logs(
            row, stdout=stdout, stderr=stderr, timestamps=timestamps, tail=tail, since=since
        )

    def container_exec(
        self,
        context: RequestContext,
        container_uuid: str,
        command: list[str] | str,
        run: bool = True,
        interactive: bool = False,
    ) -> dict[str, Any]:
        """``run``: the command's output and exit code (bounded by [docker]/execute_timeout).
        Otherwise an exec instance is created, recorded with a fresh token, and its id given
        back for the console proxy."""
        row = rows.load_for_call(container_uuid)
        if run:
            result = self.driver.execute(row, command, interactive=False)
            return {
                "output": result["output"],
                "exit_code": result["exit_code"],
                "exec_id": None,
                "token": None,
            }
        exec_id = self.driver.execute_create(row, command, interactive=bool(interactive))
        # The exec_instance row keeps only a digest of the token (zun.console.tokens).
        token = console_tokens.issue_exec_token(container_uuid, exec_id)
        return {"output": None, "exit_code": None, "exec_id": exec_id, "token": token}

    def container_exec_resize(
        self,
        context: RequestContext,
        container_uuid: str,
        exec_id: str,
        height: int | None = None,
        width: int | None = None,
    ) -> None:
        rows.load_for_call(container_uuid)
        try:
            self.driver.execute_resize(exec_id, height, width)
        except exception.ZunException as exc:
            if is_not_found(exc):
                raise exception.Invalid(
                    message=f"Exec instance {exec_id} of container {container_uuid} could "
                    "not be found."
                ) from None
            raise

    def container_attach(self, context: RequestContext, container_uuid: str) -> dict[str, Any]:
        """A new console token for the container (the console proxy checks it)."""
        rows.load_for_call(container_uuid)
        token = console_tokens.issue_attach_token(container_uuid)
        return {"token": token, "url": console_tokens.console_url(container_uuid, token)}

    def container_resize(
        self,
        context: RequestContext,
        container_uuid: str,
        height: int | None = None,
        width: int | None = None,
    ) -> None:
        self.driver.resize(rows.load_for_call(container_uuid), height, width)

    def container_top(
        self, context: RequestContext, container_uuid: str, ps_args: str | None = None
    ) -> dict[str, Any]:
        return self.driver.top(rows.load_for_call(container_uuid), ps_args)

    def container_get_archive(
        self, context: RequestContext, container_uuid: str, path: str
    ) -> dict[str, Any]:
        data, stat = self.driver.get_archive(rows.load_for_call(container_uuid), path)
        return {"data": base64.b64encode(data).decode("ascii"), "stat": stat}

    def container_put_archive(
        self, context: RequestContext, container_uuid: str, path: str, data_b64: str
    ) -> None:
        row = rows.load_for_call(container_uuid)
        try:
            data = base64.b64decode(data_b64, validate=True)
        except (binascii.Error, ValueError, TypeError):
            raise exception.Base64Exception() from None
        self.driver.put_archive(row, path, data)

    def container_stats(self, context: RequestContext, container_uuid: str) -> dict[str, Any]:
        return self.driver.stats(rows.load_for_call(container_uuid))

    def network_list(self, context: RequestContext, container_uuid: str) -> list[dict[str, Any]]:
        info = self.driver.inspect(rows.load_for_call(container_uuid))
        return net_addresses.network_list_entries(net_addresses.addresses_from_inspect(info))
