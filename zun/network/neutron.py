"""Neutron's API (v2.0) as Zun uses it: networks, subnets, ports, security groups, subnet pools.

Every call goes through a keystoneauth session, as in the original's ``[neutron_client]``:

* zun-api uses the **user's token** (:func:`for_request`), so Neutron's own visibility rules
  decide which networks, ports and security groups a user may name (another project's private
  network is simply not there);
* zun-compute uses zun's **service credentials** ``[keystone_auth]`` (:func:`for_service`): user
  tokens never reach the nodes. The ports it makes carry the container's project as their owner.

The endpoint comes from the catalog, filtered by ``[neutron_client]/region_name`` and
``endpoint_type``. Failures are Zun exceptions with a clear code: Neutron (or Keystone) not
answering, or answering 5xx, is :class:`~zun.common.exception.NeutronUnavailable` (503), and so
is Keystone refusing zun's own credentials; Keystone refusing the user's token is ``TokenRefused``
(401); Neutron refusing a request keeps its status and words (404 not found, 409 an IP address
in use, 400 an address outside the subnet).
"""

from __future__ import annotations

import ipaddress
import uuid
from typing import Any

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3
from oslo_config import cfg

from zun.common import exception, service_catalog

# Interface names of [neutron_client]/endpoint_type (publicURL...) as keystoneauth wants them.
TIMEOUT = 30


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


def _conf(conf: Any) -> Any:
    if conf is None:
        from zun.conf import CONF

        return CONF
    return conf


def _auth_url(conf: Any) -> str:
    # auth_url is an option of the auth plugin, which keystoneauth registers only when it
    # loads the plugin; registering the same definitions first is harmless.
    auth_type = conf.keystone_auth.auth_type or "password"
    conf.register_opts(ks_loading.get_auth_plugin_conf_options(auth_type), group="keystone_auth")
    url = conf.keystone_auth.auth_url
    if not url:
        try:  # keystonemiddleware registers [keystone_authtoken] only in zun-api
            url = conf.keystone_authtoken.www_authenticate_uri
        except cfg.NoSuchOptError:
            url = None
    if not url:
        raise exception.NeutronUnavailable(
            reason="no Keystone address to find Neutron: set [keystone_auth]/auth_url"
        )
    return str(url)


def for_request(context: Any, conf: Any = None) -> NeutronClient:
    """The client zun-api uses for a request: the user's token, in the user's project."""
    conf = _conf(conf)
    if not getattr(context, "auth_token", None):
        raise exception.Invalid(
            message="Neutron networking needs the user's Keystone token: the request carries "
            "none ([api]/auth_strategy = keystone, or an X-Auth-Token header)."
        )
    auth = v3.Token(
        auth_url=_auth_url(conf), token=context.auth_token, project_id=context.project_id
    )
    return NeutronClient(
        ks_loading.load_session_from_conf_options(conf, "keystone_auth", auth=auth),
        conf,
        as_user=True,
    )


def for_service(conf: Any = None) -> NeutronClient:
    """The client a node uses: zun's own credentials ([keystone_auth])."""
    conf = _conf(conf)
    _auth_url(conf)
    try:
        auth = ks_loading.load_auth_from_conf_options(conf, "keystone_auth")
        sess = ks_loading.load_session_from_conf_options(conf, "keystone_auth", auth=auth)
    except ks_exc.ClientException as exc:
        raise exception.NeutronUnavailable(
            reason=f"zun's service credentials ([keystone_auth]) are unusable: {exc}"
        ) from exc
    return NeutronClient(sess, conf)


def _neutron_words(resp: Any) -> str:
    try:
        body = resp.json()
    except ValueError:
        return (resp.text or "").strip()[:300]
    err = body.get("NeutronError") if isinstance(body, dict) else None
    if isinstance(err, dict):
        return str(err.get("message") or err.get("type") or body)
    return str(body)[:300]


class NeutronClient:
    def __init__(
        self,
        session: ks_session.Session,
        conf: Any = None,
        endpoint: str | None = None,
        as_user: bool = False,
    ) -> None:
        self._session = session
        self._conf = conf
        self._endpoint = endpoint.rstrip("/") if endpoint else None
        self._as_user = as_user

    def _refused(self, exc: Exception) -> exception.ZunException:
        """Keystone said no: the user's token (401) or zun's own credentials (503)."""
        if self._as_user:
            return exception.TokenRefused(reason=str(exc))
        return exception.NeutronUnavailable(
            reason=f"Keystone refused zun's service credentials ([keystone_auth]): {exc}"
        )

    # -- plumbing ------------------------------------------------------------------------------

    def endpoint(self) -> str:
        if self._endpoint is None:
            options: dict[str, Any] = {"service_type": "network"}
            if self._conf is not None:
                group = self._conf.neutron_client
                options["interface"] = service_catalog.interface(group.endpoint_type)
                options["region_name"] = group.region_name
            try:
                url = self._session.get_endpoint(**options)
            except ks_exc.Unauthorized as exc:
                raise self._refused(exc) from exc
            except ks_exc.NotFound as exc:
                # Keystone answers 404 for a token it cannot read ("Could not recognize").
                if self._as_user:
                    raise self._refused(exc) from exc
                raise exception.NeutronUnavailable(reason=f"Keystone: {exc}") from exc
            except ks_exc.ClientException as exc:
                raise exception.NeutronUnavailable(reason=f"Keystone: {exc}") from exc
            if not url:
                raise exception.NeutronUnavailable(
                    reason="the service catalog has no network endpoint for "
                    f"{options.get('region_name') or 'any region'}"
                )
            self._endpoint = url.rstrip("/")
        return self._endpoint

    def _tls(self) -> dict[str, Any]:
        """[neutron_client]'s ca_file, cert_file, key_file and insecure for the requests to
        Neutron (the session's own TLS settings are Keystone's)."""
        if self._conf is None:
            return {}
        return service_catalog.tls_options(self._conf.neutron_client)

    def _call(
        self, method: str, path: str, not_found: exception.ZunException | None = None, **kwargs: Any
    ) -> Any:
        url = f"{self.endpoint()}/v2.0/{path}"
        try:
            resp = self._session.request(
                url, method, raise_exc=False, timeout=TIMEOUT, **self._tls(), **kwargs
            )
        except ks_exc.SSLError as exc:
            raise exception.NeutronUnavailable(
                reason="the TLS handshake with Neutron failed (see [neutron_client]/ca_file, "
                f"cert_file, key_file, insecure): {exc}"
            ) from exc
        except (
            ks_exc.ConnectionError,
            ks_exc.EndpointNotFound,
            ks_exc.AuthorizationFailure,
            ks_exc.DiscoveryFailure,
        ) as exc:
            raise exception.NeutronUnavailable(reason=str(exc)) from exc
        except ks_exc.Unauthorized as exc:
            raise self._refused(exc) from exc
        except ks_exc.ClientException as exc:
            raise exception.NeutronUnavailable(reason=str(exc)) from exc
        status = resp.status_code
        if status < 400:
            return resp.json() if resp.content else None
        words = _neutron_words(resp)
        if status >= 500:
            raise exception.NeutronUnavailable(reason=f"Neutron answered {status}: {words}")
        if status == 404 and not_found is not None:
            raise not_found
        if status == 404:
            raise exception.NotFound(message=f"Neutron: {words}")
        if status == 409:
            raise exception.Conflict(message=f"Neutron: {words}")
        if status == 401:
            raise self._refused(RuntimeError(f"Neutron answered 401: {words}"))
        if status == 403:
            raise exception.NotAuthorized(message=f"Neutron: {words}")
        raise exception.Invalid(message=f"Neutron: {words}")

    def _list(self, kind: str, key: str | None = None, **filters: Any) -> list[dict[str, Any]]:
        params = {k: v for k, v in filters.items() if v is not None}
        return list(self._call("GET", kind, params=params or None)[key or kind.replace("-", "_")])

    # -- networks and subnets ------------------------------------------------------------------

    def get_network(self, ident: str) -> dict[str, Any]:
        """A network by id or name (404 ``NetworkNotFound``; 409 for a name several have)."""
        nets = self._list("networks", id=ident) if is_uuid(ident) else []
        if not nets:
            nets = self._list("networks", name=ident)
        if not nets:
            raise exception.NetworkNotFound(network=ident)
        if len(nets) > 1:
            raise exception.Conflict(
                message=f"Multiple neutron networks exist with name {ident}. "
                "Please use the uuid instead."
            )
        return nets[0]

    def subnets(self, network_id: str) -> list[dict[str, Any]]:
        return self._list("subnets", network_id=network_id)

    def available_network(self, project_id: str) -> dict[str, Any]:
        """The project's oldest network of its own, else the oldest shared one (409 if none),
        as the original chose a network for a create without ``nets``."""
        nets = self._list("networks", project_id=project_id, shared="false") or self._list(
            "networks", shared="true"
        )
        if not nets:
            raise exception.Conflict(message="There is no neutron network available")
        return sorted(nets, key=lambda n: (n.get("created_at") or "", n["id"]))[0]

    # -- ports ---------------------------------------------------------------------------------

    def get_port(self, ident: str) -> dict[str, Any]:
        ports = self._list("ports", id=ident) if is_uuid(ident) else []
        if not ports:
            ports = self._list("ports", name=ident)
        if not ports:
            raise exception.PortNotFound(port=ident)
        if len(ports) > 1:
            raise exception.Conflict(
                message=f"Multiple neutron ports exist with name {ident}. "
                "Please use the uuid instead."
            )
        return ports[0]

    def show_port(self, port_id: str) -> dict[str, Any] | None:
        try:
            return dict(
                self._call(
                    "GET", f"ports/{port_id}", not_found=exception.PortNotFound(port=port_id)
                )["port"]
            )
        except exception.PortNotFound:
            return None

    def ports(self, **filters: Any) -> list[dict[str, Any]]:
        return self._list("ports", **filters)

    def create_port(self, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self._call("POST", "ports", json={"port": body})["port"])

    def update_port(self, port_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return dict(
            self._call(
                "PUT",
                f"ports/{port_id}",
                json={"port": body},
                not_found=exception.PortNotFound(port=port_id),
            )["port"]
        )

    def _delete(self, path: str) -> bool:
        """DELETE ``path``; False when it was gone already."""
        try:
            self._call("DELETE", path, not_found=exception.NotFound(message="gone"))
        except exception.NotFound:
            return False
        return True

    def delete_port(self, port_id: str) -> bool:
        """False when it was gone already."""
        return self._delete(f"ports/{port_id}")

    def ensure_port_usable(self, port: dict[str, Any], project_id: str | None) -> None:
        """A port a user brings: their project's, not bound to anything, not in use."""
        if port.get("project_id", port.get("tenant_id")) != project_id:
            raise exception.PortNotUsable(port=port["id"])
        if port.get("device_id"):
            raise exception.PortInUse(port=port["id"])
        if port.get("status") in ("ACTIVE", "BUILD", "ERROR"):
            raise exception.PortNotUsable(port=port["id"])
        if port.get("binding:vif_type") == "binding_failed":
            raise exception.PortBindingFailed(port=port["id"])

    def check_fixed_ip(self, network_id: str, ip: str) -> None:
        """400 when ``ip`` is in none of the network's subnets, 409 when a port has it."""
        addr = ipaddress.ip_address(ip)
        subnets = [s for s in self.subnets(network_id) if addr in ipaddress.ip_network(s["cidr"])]
        if not subnets:
            raise exception.Invalid(
                message=f"IP address {ip} is not in a subnet of network {network_id}."
            )
        if self.ports(network_id=network_id, fixed_ips=f"ip_address={ip}"):
            raise exception.Conflict(
                message=f"IP address {ip} is already allocated in network {network_id}."
            )

    # -- subnet pools (the per-node IPAM pools of kuryr's Docker networks) --------------------

    def subnetpools(self, **filters: Any) -> list[dict[str, Any]]:
        return self._list("subnetpools", **filters)

    def create_subnetpool(self, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self._call("POST", "subnetpools", json={"subnetpool": body})["subnetpool"])

    def delete_subnetpool(self, pool_id: str) -> bool:
        """False when it was gone already."""
        return self._delete(f"subnetpools/{pool_id}")

    # -- security groups -----------------------------------------------------------------------

    def find_security_group(self, name_or_id: str, project_id: str | None) -> str:
        """The id of a security group of ``project_id`` by name or id (400 when there is none,
        409 when a name is ambiguous), as the original resolved them."""
        if is_uuid(name_or_id):
            found = self._list("security-groups", id=name_or_id)
            if found:
                return str(found[0]["id"])
        found = self._list("security-groups", name=name_or_id, project_id=project_id)
        if not found:
            raise exception.InvalidValue(message=f"Security group {name_or_id} not found.")
        if len(found) > 1:
            raise exception.Conflict(
                message=f"Multiple security group matches found for name {name_or_id}, "
                "use an ID to be more specific."
            )
        return str(found[0]["id"])

    def security_groups(self, **filters: Any) -> list[dict[str, Any]]:
        return self._list("security-groups", **filters)

    def create_security_group(
        self, name: str, project_id: str | None, description: str = ""
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name, "description": description}
        if project_id:
            body["project_id"] = project_id
        return dict(
            self._call("POST", "security-groups", json={"security_group": body})["security_group"]
        )

    def create_security_group_rule(self, body: dict[str, Any]) -> dict[str, Any]:
        return dict(
            self._call("POST", "security-group-rules", json={"security_group_rule": body})[
                "security_group_rule"
            ]
        )

    def delete_security_group(self, group_id: str) -> bool:
        """False when it was gone already."""
        return self._delete(f"security-groups/{group_id}")
