"""Changes to a running container, casts unless said: resize (limits), update (call),
commit, network attach and detach, and the security groups (Neutron's: refused by the embedded
Docker networking, applied to the container's ports with the kuryr driver)."""

from __future__ import annotations

import logging
from typing import Any

from zun.common import consts, exception
from zun.common.context import RequestContext
from zun.compute import container_rows as rows
from zun.compute.container_base import ContainerNodeBase
from zun.compute.container_rows import reason_of
from zun.db.queries import node as node_q
from zun.network import access as network_access
from zun.network import addresses as net_addresses
from zun.network import docker_network, kuryr_network, kuryr_networks, mode
from zun.network import neutron as neutron_api

LOG = logging.getLogger(__name__)


class ContainerChanges(ContainerNodeBase):
    """Changes to a container's limits, image and networks."""

    # --- resources ------------------------------------------------------------------------

    def resize_container(
        self,
        context: RequestContext,
        container_uuid: str,
        cpu: float | None = None,
        memory: str | None = None,
    ) -> None:
        self.submit(context, container_uuid, self._do_resize_container, cpu, memory)

    def _do_resize_container(
        self, context: RequestContext, container_uuid: str, cpu: float | None, memory: str | None
    ) -> None:
        row = rows.load(container_uuid)
        if row is None:
            return
        rows.start_event(context, container_uuid, "resize", host=self.host)
        task = (consts.CONTAINER_RESIZING, None)
        try:
            self.driver.update(row, cpu=cpu, memory=memory)
        except Exception as exc:
            rows.finish(
                context,
                container_uuid,
                "resize",
                {"task_state": None},
                task,
                exc=exc,
                host=self.host,
            )
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

        rows.finish(context, container_uuid, "resize", values, task, extra=recount, host=self.host)

    def container_update(
        self,
        context: RequestContext,
        container_uuid: str,
        cpu: float | None = None,
        memory: str | None = None,
    ) -> dict[str, Any]:
        """Apply new limits live (the API already stored and claimed them)."""
        row = rows.load_for_call(container_uuid)
        self.driver.update(row, cpu=cpu, memory=memory)
        return {
            "uuid": container_uuid,
            "cpu": cpu if cpu is not None else row.cpu,
            "memory": memory if memory is not None else row.memory,
        }

    # --- commit ---------------------------------------------------------------------------

    def container_commit(
        self,
        context: RequestContext,
        container_uuid: str,
        repository: str,
        tag: str | None = None,
        image_uuid: str | None = None,
    ) -> None:
        self.submit(context, container_uuid, self._do_commit, repository, tag, image_uuid)

    def _do_commit(
        self,
        context: RequestContext,
        container_uuid: str,
        repository: str,
        tag: str | None,
        image_uuid: str | None,
    ) -> None:
        row = rows.load(container_uuid)
        if row is None:
            return
        rows.start_event(context, container_uuid, "commit", host=self.host)
        task = (consts.CONTAINER_COMMITTING, None)
        tag = tag or "latest"
        image_id = None
        try:
            image_id = self.driver.commit(row, repository, tag)
            size = self.driver.image_size(image_id)
        except Exception as exc:
            if image_id is not None:
                # A failed commit leaves no image behind.
                self.driver.remove_image(image_id)
            LOG.warning("Commit of container %s failed: %s", container_uuid, reason_of(exc))

            def forget(session: Any) -> None:
                if image_uuid:
                    node_q.delete_image_by_uuid(session, image_uuid)

            rows.finish(
                context,
                container_uuid,
                "commit",
                {"task_state": None},
                task,
                exc=exc,
                extra=forget,
                host=self.host,
            )
            return

        def record(session: Any) -> None:
            if image_uuid:
                node_q.update_image_by_uuid(
                    session, image_uuid, {"image_id": image_id, "size": str(size)}
                )

        rows.finish(
            context,
            container_uuid,
            "commit",
            {"task_state": None},
            task,
            extra=record,
            host=self.host,
        )

    # --- networks -------------------------------------------------------------------------

    def network_attach(
        self,
        context: RequestContext,
        container_uuid: str,
        network: str,
        fixed_ip: str | None = None,
        requested_network: dict[str, Any] | None = None,
    ) -> None:
        if mode.kuryr_enabled():
            request = requested_network or {
                "network": network,
                "port": "",
                "fixed_ip": fixed_ip or "",
                "preserve_on_delete": False,
            }
            self.submit(
                context,
                container_uuid,
                self._do_neutron_network,
                "network_attach",
                consts.NETWORK_ATTACHING,
                request,
            )
            return
        self.submit(
            context,
            container_uuid,
            self._do_network,
            "network_attach",
            consts.NETWORK_ATTACHING,
            network,
            fixed_ip,
        )

    def network_detach(self, context: RequestContext, container_uuid: str, network: str) -> None:
        if mode.kuryr_enabled():
            self.submit(
                context,
                container_uuid,
                self._do_neutron_network,
                "network_detach",
                consts.NETWORK_DETACHING,
                {"network": network},
            )
            return
        self.submit(
            context,
            container_uuid,
            self._do_network,
            "network_detach",
            consts.NETWORK_DETACHING,
            network,
            None,
        )

    def _do_network(
        self,
        context: RequestContext,
        container_uuid: str,
        action: str,
        task_state: str,
        network: str,
        fixed_ip: str | None,
    ) -> None:
        row = rows.load(container_uuid)
        if row is None:
            return
        rows.start_event(context, container_uuid, action, host=self.host)
        ref = self.driver.engine_ref(row)
        try:
            if action == "network_attach":
                network_access.check_joinable(context.is_admin, row.project_id, [network])
                self.resources.connect(ref, network, fixed_ip)
            else:
                self.resources.disconnect(ref, network)
            info = self.driver.inspect(row)
            values: dict[str, Any] = {
                "addresses": net_addresses.addresses_from_inspect(info),
                "task_state": None,
            }
        except Exception as exc:
            LOG.warning(
                "%s of %s to %s failed: %s", action, container_uuid, network, reason_of(exc)
            )
            rows.finish(
                context,
                container_uuid,
                action,
                {"task_state": None},
                (task_state, None),
                exc=exc,
                host=self.host,
            )
            return
        rows.finish(context, container_uuid, action, values, (task_state, None), host=self.host)

    def _do_neutron_network(
        self,
        context: RequestContext,
        container_uuid: str,
        action: str,
        task_state: str,
        request: dict[str, Any],
    ) -> None:
        """Attach (a new or the user's port) or detach a Neutron network (kuryr)."""
        row = rows.load(container_uuid)
        if row is None:
            return
        rows.start_event(context, container_uuid, action, host=self.host)
        network = str(request["network"])
        addresses = dict(row.addresses or {})
        taken = kuryr_network.PortsTaken()
        neutron = None
        try:
            neutron = neutron_api.for_service()
            client = self.driver.engine
            ref = self.driver.engine_ref(row)
            if action == "network_attach":
                port = kuryr_network.take_port(
                    neutron,
                    row.uuid,
                    row.project_id,
                    request,
                    list(row.security_groups) if row.security_groups else None,
                    taken,
                )
                network = str(port["network_id"])
                kuryr_networks.ensure(
                    client,
                    neutron,
                    network,
                    kuryr_networks.Owner(self.host, row.project_id, row.user_id),
                )
                addrs = kuryr_network.addresses_of(port, bool(request.get("preserve_on_delete")))
                endpoint = kuryr_network.endpoint_of(addrs)
                docker_network.connect(client, ref, network, ip=endpoint.get("ipv4_address"))
                addresses[network] = addrs
            else:
                docker_network.disconnect(client, ref, network)
                kuryr_network.release_ports(neutron, kuryr_network.ports_of(addresses, network))
                addresses.pop(network, None)
        except Exception as exc:
            LOG.warning(
                "%s of %s to %s failed: %s", action, container_uuid, network, reason_of(exc)
            )
            if neutron is not None:
                kuryr_network.release_ports(neutron, taken.ports)
            rows.finish(
                context,
                container_uuid,
                action,
                {"task_state": None},
                (task_state, None),
                exc=exc,
                host=self.host,
            )
            return
        rows.finish(
            context,
            container_uuid,
            action,
            {"addresses": addresses, "task_state": None},
            (task_state, None),
            host=self.host,
        )

    # --- security groups: Neutron's (kuryr); the Docker bridges have none -----------------

    def add_security_group(
        self, context: RequestContext, container_uuid: str, security_group: str | None = None
    ) -> None:
        if not mode.kuryr_enabled():
            docker_network.check_security_groups([security_group or "?"])
        self.submit(
            context,
            container_uuid,
            self._do_security_group,
            "add_security_group",
            consts.SG_ADDING,
            str(security_group),
        )

    def remove_security_group(
        self, context: RequestContext, container_uuid: str, security_group: str | None = None
    ) -> None:
        if not mode.kuryr_enabled():
            docker_network.check_security_groups([security_group or "?"])
        self.submit(
            context,
            container_uuid,
            self._do_security_group,
            "remove_security_group",
            consts.SG_REMOVING,
            str(security_group),
        )

    def _do_security_group(
        self, context: RequestContext, container_uuid: str, action: str, task_state: str, group: str
    ) -> None:
        """Add a security group to (or remove it from) every port of the container."""
        row = rows.load(container_uuid)
        if row is None:
            return
        rows.start_event(context, container_uuid, action, host=self.host)
        adding = action == "add_security_group"
        groups = list(row.security_groups or [])
        try:
            neutron = neutron_api.for_service()
            for port_id, _preserve in kuryr_network.ports_of(row.addresses):
                port = neutron.show_port(port_id)
                if port is None:
                    continue
                current = list(port.get("security_groups") or [])
                wanted = (
                    list(dict.fromkeys([*current, group]))
                    if adding
                    else [g for g in current if g != group]
                )
                try:
                    neutron.update_port(port_id, {"security_groups": wanted})
                except exception.Invalid as exc:
                    cls = (
                        exception.SecurityGroupCannotBeApplied
                        if adding
                        else exception.SecurityGroupCannotBeRemoved
                    )
                    raise cls(message=str(exc)) from exc
            groups = (
                list(dict.fromkeys([*groups, group]))
                if adding
                else [g for g in groups if g != group]
            )
        except Exception as exc:
            LOG.warning("%s %s on %s failed: %s", action, group, container_uuid, reason_of(exc))
            rows.finish(
                context,
                container_uuid,
                action,
                {"task_state": None},
                (task_state, None),
                exc=exc,
                host=self.host,
            )
            return
        rows.finish(
            context,
            container_uuid,
            action,
            {"security_groups": groups, "task_state": None},
            (task_state, None),
            host=self.host,
        )
