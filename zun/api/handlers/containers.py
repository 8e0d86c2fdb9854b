"""``/v1/containers``: list, create, show, update, delete and the actions (rest-api.md §6).

Each handler follows the original's order of checks: version window (routing), content type,
schemas, policy, lookup (404/409), policy on the container, state (409), then the compute API.
Parameters arrive as python-zunclient sends them (§4.2, client-expectations.md): in the query
or a JSON body, booleans as ``True``/``False`` strings, unset optionals as the string
``None``, exec commands as one shell-quoted string.

Deliberate differences from Zun (each a fix listed in rest-api.md §19):
* a missing required parameter is a 400, not a 500 (#6);
* the query schemas of stop, reboot, logs, execute... also check values sent in the body (#10);
* ``stop=true&force=true`` needs ``container:delete_force`` like ``force=true`` alone (#9);
* field checks (microversion, field policies) run before the quota, so a request that is both
  invalid and over quota gets the 400/403 of the field, not ``over-quota``;
* a container whose host is known down gets a 409 naming the host (not an obfuscated 500),
  for casts as well as calls (Zun lost casts silently);
* a member may join (``nets`` at create, ``network_attach``) only its project's network or a
  network an operator registered (``POST /v1/networks``): any other name is a 404
  ``network-not-found``, as another project's Neutron network was in Zun.
"""

from __future__ import annotations

import shlex
from typing import Any

import webob

from zun.api import common as api_common
from zun.api import validation
from zun.api.request import ApiRequest
from zun.api.response import accepted_with_location, empty, json_reply, null_reply
from zun.api.routing import misroute, route
from zun.api.views import containers as views
from zun.common import consts, exception, policy
from zun.common import utils as zun_utils
from zun.common.context import RequestContext
from zun.compute import api as compute_api
from zun.conf import CONF
from zun.db import engine, models, paging
from zun.db.queries import containers as container_q
from zun.image import glance_client
from zun.network import access as network_access
from zun.network import mode as network_mode
from zun.network import neutron as neutron_api
from zun.network import neutron_requests

COLLECTION = "containers"
ITEM = "/v1/containers/{container_ident}"

LIST_PARAMS = ("all_projects", *api_common.PAGE_PARAMS, *container_q.LIST_FILTERS)

# (field, first microversion) checked on create, in the original's order.
_CREATE_FIELD_VERSIONS = (
    ("auto_remove", "1.3"),
    ("runtime", "1.5"),
    ("hostname", "1.9"),
    ("healthcheck", "1.22"),
    ("mounts", "1.11"),
    ("privileged", "1.21"),
    ("exposed_ports", "1.24"),
    ("registry", "1.31"),
)
# Fields whose mere presence (even null/false) triggers the check; the others need a value.
_PRESENCE_FIELDS = frozenset({"auto_remove", "privileged", "exposed_ports"})


# --- small helpers ----------------------------------------------------------------------------


def _api() -> compute_api.ContainerAPI:
    return compute_api.get_api()


def _target(container: models.Container) -> dict[str, Any]:
    return {"project_id": container.project_id, "user_id": container.user_id}


_opt = api_common.optional
_opt_int = api_common.optional_int


def _bool(params: dict[str, Any], name: str, default: bool) -> bool:
    value = params.get(name)
    if value is None:
        return default
    return api_common.parse_bool(value, name)


def _version_check(req: ApiRequest, param: str, min_version: str) -> None:
    if not req.version_at_least(min_version):
        raise exception.InvalidParamInVersion(
            param=param, req_version=str(req.version), min_version=min_version
        )


def _lookup(req: ApiRequest, ident: str, rule: str | None) -> models.Container:
    """The container by UUID or name (404/409), then ``rule`` with it as the target (403)."""
    container = _api().get(req.context, ident)
    if rule is not None:
        policy.authorize(req.context, rule, _target(container))
    return container


def _view(req: ApiRequest, uuid: str) -> dict[str, Any]:
    with engine.transaction(readonly=True) as session:
        row = container_q.get_view_row(session, uuid)
    if row is None:
        raise container_q.not_found(uuid)
    return views.render_one(req.context, row, req.host_url)


def _validate_merged_query(req: ApiRequest, schema: str) -> dict[str, Any]:
    """Query-schema routes: validate the query AND any JSON body values (fix #10)."""
    params = req.merged_params()
    validation.validate_query(schema, params)
    return params


def _validate_merged_body(req: ApiRequest, schema: str) -> dict[str, Any]:
    """Body-schema routes: the body merged with the query, validated as a body."""
    params = req.merged_params()
    validation.validate_body(schema, params)
    return params


def _check_networks(ctx: RequestContext, project_id: str | None, names: list[str | None]) -> None:
    """404 unless a container of ``project_id`` may join each network (network/access.py)."""
    network_access.check_joinable(ctx.is_admin, project_id, names)


def _json_text_reply(text: str) -> webob.Response:
    """JSON encoded already, without the optional spaces (a 1000-item list is ~15% smaller)."""
    resp = webob.Response(status=200, content_type="application/json", charset=None)
    resp.body = text.encode()
    return resp


# --- list, show -------------------------------------------------------------------------------


@route("GET", "/v1/containers")
def list_containers(req: ApiRequest) -> webob.Response:
    ctx = req.context
    policy.authorize(ctx, "container:get_all")
    params = req.query()
    all_projects = api_common.all_projects(params)
    if all_projects:
        policy.authorize(ctx, "container:get_all_all_projects")
    api_common.check_unknown_params(params, LIST_PARAMS)
    page = api_common.page_params(params)
    filters: dict[str, Any] = {}
    for name in container_q.LIST_FILTERS:
        if name in params:
            policy.authorize(ctx, f"container:get_one:{name}", might_not_exist=True)
            filters[name] = params[name]
    if "auto_remove" in filters:
        filters["auto_remove"] = api_common.parse_bool(filters["auto_remove"], "auto_remove")
    with engine.transaction(readonly=True) as session:
        rows = container_q.list_for_view(
            session, ctx, all_projects=all_projects, filters=filters, page=page
        )
    items, last = views.encode_page(ctx, rows, page.resource_url)
    # next_link reads only the number of items and the last one.
    next_url = api_common.next_link(req.host_url, COLLECTION, page, [last] * len(items))
    # What json.dumps({"containers": [...], "next": ...}, separators=(",", ":")) would give.
    return _json_text_reply(
        f'{{"containers":[{",".join(items)}],"next":{views.encode_compact(next_url)}}}'
    )


@route("GET", ITEM)
def show_container(req: ApiRequest, container_ident: str) -> webob.Response:
    ctx = req.context
    if api_common.all_projects(req.query()):
        policy.authorize(ctx, "container:get_one_all_projects")
    data, unhealthy = _api().show_view_row(
        ctx,
        container_ident,
        lambda row: policy.authorize(
            ctx, "container:get_one", {"project_id": row.project_id, "user_id": row.user_id}
        ),
    )
    row = views.as_row(data)
    view = views.render_one(ctx, row, req.host_url)
    return json_reply(views.health_marker([row], unhealthy)(row, view))


# --- create -----------------------------------------------------------------------------------


def _labels(labels: dict[str, Any] | None) -> dict[str, str] | None:
    if labels is None:
        return None
    return {str(k): str(v) for k, v in labels.items()}


def _restart_policy(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if not value:
        return value
    policy_dict = {"restart_policy": dict(value)}
    zun_utils.check_for_restart_policy(policy_dict)
    result = policy_dict["restart_policy"]
    result["MaximumRetryCount"] = str(result.get("MaximumRetryCount", "0"))
    return result


def _healthcheck(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if not value:
        return value
    result = dict(value)
    if "cmd" in result:
        result["test"] = result.pop("cmd")
    return result


def _registry_id(ctx: RequestContext, ident: str) -> int:
    with engine.transaction(readonly=True) as session:
        row = paging.get_by_ident(
            session,
            models.Registry,
            ident,
            context=ctx,
            not_found=lambda i: exception.RegistryNotFound(registry=i),
            singular="registry",
            plural="registries",
        )
        return row.id


def _command(req: ApiRequest, value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):  # before 1.20 the schema only lets a string through
        try:
            return shlex.split(value)
        except ValueError as exc:
            raise exception.InvalidValue(message=f"Invalid command {value!r}: {exc}") from None
    return list(value)


def _check_capabilities(value: Any) -> None:
    names = [n.strip() for n in str(value).split(",")]
    if not all(n.replace("_", "").isalpha() and n.isascii() for n in names):
        raise exception.InvalidValue(
            message=f"Label {consts.LABEL_CAP_ADD} must list capability names separated by "
            f"commas, e.g. SYS_PTRACE,NET_ADMIN; got {str(value)[:100]!r}."
        )


def _create(req: ApiRequest, schema: str) -> webob.Response:
    req.require_json()
    validation.validate_query("containers.query_param_create", req.query())
    body = req.merged_params()
    run_value = body.pop("run", None)
    validation.validate_body(schema, body)
    ctx = req.context
    policy.authorize(ctx, "container:create")

    run = api_common.parse_bool(run_value, "run") if run_value is not None else False
    interactive = _bool(body, "interactive", False)
    for field, min_version in _CREATE_FIELD_VERSIONS:
        value = body.get(field)
        given = value is not None if field in _PRESENCE_FIELDS else bool(value)
        if not given:
            continue
        _version_check(req, field, min_version)
        if field == "runtime":
            policy.authorize(ctx, "container:create:runtime")
        elif field == "privileged":
            policy.authorize(ctx, "container:create:privileged")
    if body.get("image_pull_policy"):
        policy.authorize(ctx, "container:create:image_pull_policy")
    if consts.LABEL_CAP_ADD in (body.get("labels") or {}):
        # Extra capabilities widen what the container can do to the node: an admin's choice.
        policy.authorize(ctx, "container:create:cap_add")
        _check_capabilities(body["labels"][consts.LABEL_CAP_ADD])
    requested_host = body.get("host")
    if requested_host:
        policy.authorize(ctx, "container:create:requested_destination")

    if req.version_at_least("1.20") and not req.version_at_least("1.36") and "interactive" in body:
        tty = interactive
    else:
        tty = _bool(body, "tty", False)
    image_driver = _opt(body.get("image_driver")) or CONF.default_image_driver
    if image_driver == consts.IMAGE_DRIVER_GLANCE:
        # Looked up now, with the user's token (tokens never reach the nodes): a missing,
        # foreign, ambiguous or non-Docker image is refused before anything is claimed.
        glance_client.for_request(ctx).find(body["image"])
    memory = body.get("memory")
    cpu = body.get("cpu")
    disk = body.get("disk")
    security_groups = body.get("security_groups")
    if security_groups is not None:
        security_groups = list(dict.fromkeys(security_groups))
    exposed_ports = body.get("exposed_ports")
    if exposed_ports is not None:
        exposed_ports = zun_utils.build_exposed_ports(exposed_ports)
    registry_id = _registry_id(ctx, body["registry"]) if body.get("registry") else None
    requested_networks = list(body.get("nets") or [])
    if network_mode.kuryr_enabled():
        # Neutron, with the user's token: what they name must be theirs (or shared).
        neutron = neutron_api.for_request(ctx)
        security_groups = neutron_requests.security_group_ids(ctx, neutron, security_groups)
        requested_networks = neutron_requests.build(ctx, neutron, requested_networks)
    else:
        _check_networks(ctx, ctx.project_id, [n.get("network") for n in requested_networks])
    privileged = body.get("privileged")

    values: dict[str, Any] = {
        "name": body.get("name") or compute_api.generate_name(),
        "image": body["image"],
        "command": _command(req, body.get("command")),
        "entrypoint": body.get("entrypoint"),
        "cpu": float(cpu) if cpu is not None else float(CONF.default_cpu),
        "memory": str(int(memory)) if memory is not None else str(CONF.default_memory),
        "disk": int(disk) if disk is not None else None,
        "cpu_policy": body.get("cpu_policy"),
        "workdir": body.get("workdir"),
        "environment": body.get("environment"),
        "labels": _labels(body.get("labels")),
        "hostname": body.get("hostname"),
        "image_driver": image_driver,
        "image_pull_policy": body.get("image_pull_policy"),
        "restart_policy": _restart_policy(body.get("restart_policy")),
        "interactive": interactive,
        "tty": tty,
        "auto_remove": body.get("auto_remove"),
        "auto_heal": _bool(body, "auto_heal", False),
        "privileged": (
            api_common.parse_bool(privileged, "privileged") if privileged is not None else False
        ),
        "healthcheck": _healthcheck(body.get("healthcheck")),
        "runtime": body.get("runtime"),
        "security_groups": security_groups,
        "exposed_ports": exposed_ports,
        "registry_id": registry_id,
        "project_id": ctx.project_id,
        "user_id": ctx.user_id,
        "container_type": consts.TYPE_CONTAINER,
    }
    mounts = [{"type": "volume", **m} for m in body.get("mounts") or []]
    request = compute_api.CreateRequest(
        values=values,
        run=run,
        requested_networks=requested_networks,
        requested_volumes=mounts,
        requested_host=requested_host,
        availability_zone=body.get("availability_zone"),
        hints=dict(body.get("hints") or {}),
    )
    uuid = _api().create(ctx, request)
    return accepted_with_location(
        _view(req, uuid), api_common.location(req.host_url, COLLECTION, uuid)
    )


@route("POST", "/v1/containers", "1.1", "1.19")
def create_legacy(req: ApiRequest) -> webob.Response:
    return _create(req, "containers.legacy_container_create")


@route("POST", "/v1/containers", "1.20", "1.35")
def create_v120(req: ApiRequest) -> webob.Response:
    return _create(req, "containers.container_create")


@route("POST", "/v1/containers", "1.36", "1.38")
def create_v136(req: ApiRequest) -> webob.Response:
    return _create(req, "containers.container_create")


@route("POST", "/v1/containers", "1.39", "1.39")
def create_v139(req: ApiRequest) -> webob.Response:
    return _create(req, "containers.container_create_v139")


@route("POST", "/v1/containers", "1.40")  # and later: 1.41 changed no schema
def create_v140(req: ApiRequest) -> webob.Response:
    return _create(req, "containers.container_create_v140")


@misroute("POST", ITEM)
def post_on_container(req: ApiRequest, container_ident: str) -> webob.Response:
    """400, as in the original, whose framework read the segment as create's ``run`` flag
    (never a UUID or a name); nothing is looked up, so the answer says nothing of the row."""
    req.require_json()
    raise exception.InvalidValue(
        message=f"POST is not served on a container ({container_ident}): create one with "
        "POST /v1/containers, act on one with POST /v1/containers/<id>/<action>."
    )


# --- update, rename, delete ----------------------------------------------------------------------


def _resource_changes(params: dict[str, Any]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if params.get("cpu") is not None:
        changes["cpu"] = float(params["cpu"])
    if params.get("memory") is not None:
        changes["memory"] = str(int(params["memory"]))
    return changes


@route("PATCH", ITEM)
def update_container(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_body(req, "containers.container_update")
    container = _lookup(req, container_ident, "container:update")
    changes = _resource_changes(params)
    if "name" in params and params["name"] is not None:
        changes["name"] = params["name"]
    if "auto_heal" in params:
        changes["auto_heal"] = api_common.parse_bool(params["auto_heal"], "auto_heal")
    _api().update(req.context, container, changes)
    return json_reply(_view(req, container.uuid))


@route("POST", ITEM + "/rename", "1.1", "1.13")
def rename_container(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_query(req, "containers.query_param_rename")
    api_common.require_params(params, ["name"])
    container = _lookup(req, container_ident, "container:rename")
    if params["name"] == container.name:
        raise exception.Conflict(
            message="The new name for the container is the same as the old name."
        )
    _api().rename(req.context, container, params["name"])
    return json_reply(_view(req, container.uuid))


@route("DELETE", ITEM)
def delete_container(req: ApiRequest, container_ident: str) -> webob.Response:
    ctx = req.context
    params = req.query()
    validation.validate_query("containers.query_param_delete", params)
    force = _bool(params, "force", False)
    stop = _bool(params, "stop", False)
    if force:
        _version_check(req, "force", "1.7")
    if stop:
        _version_check(req, "stop", "1.12")
    if _bool(params, "all_projects", False):
        policy.authorize(ctx, "container:delete_all_projects")
    container = _lookup(req, container_ident, "container:delete")
    if stop and container.status == consts.RUNNING:
        policy.authorize(ctx, "container:stop", _target(container))
    if force:
        policy.authorize(ctx, "container:delete_force", _target(container))
    _api().delete(ctx, container, force=force, stop=stop)
    return empty(204)


# --- casts --------------------------------------------------------------------------------------


@route("POST", ITEM + "/start")
def start_container(req: ApiRequest, container_ident: str) -> webob.Response:
    container = _lookup(req, container_ident, "container:start")
    _api().start(req.context, container)
    return null_reply(202)


@route("POST", ITEM + "/stop")
def stop_container(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_query(req, "containers.query_param_stop")
    container = _lookup(req, container_ident, "container:stop")
    _api().stop(req.context, container, _opt_int(params.get("timeout")))
    return null_reply(202)


@route("POST", ITEM + "/reboot")
def reboot_container(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_query(req, "containers.query_param_reboot")
    container = _lookup(req, container_ident, "container:reboot")
    _api().reboot(req.context, container, _opt_int(params.get("timeout")))
    return null_reply(202)


@route("POST", ITEM + "/rebuild")
def rebuild_container(req: ApiRequest, container_ident: str) -> webob.Response:
    params = req.merged_params()
    container = _lookup(req, container_ident, "container:rebuild")
    image = _opt(params.get("image"))
    image_driver = _opt(params.get("image_driver"))
    drivers = list(CONF.image_driver_list)
    if image_driver is not None and image_driver not in drivers:
        raise exception.ValidationError(
            detail=f"Invalid image_driver {image_driver!r}: it must be one of {drivers}."
        )
    if (image_driver or container.image_driver) == consts.IMAGE_DRIVER_GLANCE:
        # As for a create: found with the user's token now, refused before the state changes.
        glance_client.for_request(req.context).find(image or container.image)
    _api().rebuild(req.context, container, image=image, image_driver=image_driver)
    return null_reply(202)


@route("POST", ITEM + "/pause")
def pause_container(req: ApiRequest, container_ident: str) -> webob.Response:
    container = _lookup(req, container_ident, "container:pause")
    _api().pause(req.context, container)
    return null_reply(202)


@route("POST", ITEM + "/unpause")
def unpause_container(req: ApiRequest, container_ident: str) -> webob.Response:
    container = _lookup(req, container_ident, "container:unpause")
    _api().unpause(req.context, container)
    return null_reply(202)


@route("POST", ITEM + "/kill")
def kill_container(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_body(req, "containers.query_param_signal")
    container = _lookup(req, container_ident, "container:kill")
    _api().kill(req.context, container, _opt(params.get("signal")))
    return null_reply(202)


@route("POST", ITEM + "/resize_container", "1.19")
def resize_container(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_body(req, "containers.container_update")
    container = _lookup(req, container_ident, "container:resize_container")
    changes = _resource_changes(params)
    view = _view(req, container.uuid)  # the answer shows the values before the change
    _api().resize_container(
        req.context, container, cpu=changes.get("cpu"), memory=changes.get("memory")
    )
    return json_reply(view, 202)


@route("POST", ITEM + "/commit")
def commit_container(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_query(req, "containers.query_param_commit")
    container = _lookup(req, container_ident, "container:commit")
    image_uuid = _api().commit(
        req.context, container, repository=params["repository"], tag=_opt(params.get("tag"))
    )
    return json_reply({"uuid": image_uuid}, 202)


def _security_group(
    req: ApiRequest, ident: str, schema: str, rule: str, state_key: str
) -> tuple[models.Container, str]:
    params = _validate_merged_body(req, schema)
    api_common.require_params(params, ["name"])
    container = _lookup(req, ident, rule)
    zun_utils.validate_container_state(container, state_key)
    return container, params["name"]


@route("POST", ITEM + "/add_security_group", "1.1", "1.14")
def add_security_group(req: ApiRequest, container_ident: str) -> webob.Response:
    container, name = _security_group(
        req,
        container_ident,
        "containers.add_security_group",
        "container:add_security_group",
        "add_security_group",
    )
    if network_mode.kuryr_enabled():
        name = neutron_api.for_request(req.context).find_security_group(
            name, req.context.project_id
        )
    if name in (container.security_groups or []):
        raise exception.InvalidValue(message=f"Security group {name} has been added to container.")
    if not network_mode.kuryr_enabled():
        # Security groups are Neutron's; the embedded (Docker bridge) networking has none.
        raise exception.SecurityGroupCannotBeApplied()
    _api().add_security_group(req.context, container, name)
    return null_reply(202)


@route("POST", ITEM + "/remove_security_group", "1.1", "1.14")
def remove_security_group(req: ApiRequest, container_ident: str) -> webob.Response:
    container, name = _security_group(
        req,
        container_ident,
        "containers.remove_security_group",
        "container:remove_security_group",
        "remove_security_group",
    )
    if network_mode.kuryr_enabled():
        name = neutron_api.for_request(req.context).find_security_group(
            name, req.context.project_id
        )
    if name not in (container.security_groups or []):
        raise exception.InvalidValue(message=f"Security group {name} was not added to container.")
    if not network_mode.kuryr_enabled():
        raise exception.SecurityGroupCannotBeRemoved()
    _api().remove_security_group(req.context, container, name)
    return null_reply(202)


@route("POST", ITEM + "/network_detach", "1.6")
def network_detach(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_query(req, "containers.network_detach")
    container = _lookup(req, container_ident, "container:network_detach")
    addresses = container.addresses or {}
    network = params.get("network")
    if network_mode.kuryr_enabled():
        network = _neutron_detach_target(req, container, params)
    elif network is None:
        port = params["port"]
        network = next(
            (
                net
                for net, addrs in addresses.items()
                if any((a or {}).get("port") == port for a in addrs or [])
            ),
            None,
        )
        if network is None:
            raise exception.Invalid(
                message=f"Port {port} is not attached to container {container.uuid}."
            )
    elif network not in addresses:
        raise exception.Invalid(
            message=f"Network {network} is not attached to container {container.uuid}."
        )
    _api().network_detach(req.context, container, network=network)
    return null_reply(202)


@route("POST", ITEM + "/network_attach", "1.8")
def network_attach(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_query(req, "containers.network_attach")
    container = _lookup(req, container_ident, "container:network_attach")
    if network_mode.kuryr_enabled():
        return _neutron_attach(req, container, params)
    if params.get("port"):
        # Ports are Neutron's; the embedded networking attaches networks only.
        raise exception.PortNotFound(port=params["port"])
    api_common.require_params(params, ["network"])
    network = params["network"]
    if network in (container.addresses or {}):
        raise exception.Invalid(
            message=f"Network {network} is already attached to container {container.uuid}."
        )
    _check_networks(req.context, container.project_id, [network])
    _api().network_attach(req.context, container, network=network, fixed_ip=params.get("fixed_ip"))
    return null_reply(200)


def _neutron_detach_target(
    req: ApiRequest, container: models.Container, params: dict[str, Any]
) -> str:
    """The Neutron network id to detach (kuryr), looked up with the user's token."""
    neutron = neutron_api.for_request(req.context)
    addresses = container.addresses or {}
    if params.get("port"):
        port = neutron.get_port(str(params["port"]))
        net_id = str(port["network_id"])
        if port["id"] not in {a.get("port") for a in addresses.get(net_id) or []}:
            raise exception.Invalid(
                message=f"Port '{params['port']}' is not attached to container '{container.uuid}'."
            )
        return net_id
    net_id = str(neutron.get_network(str(params.get("network")))["id"])
    if net_id not in addresses:
        raise exception.Invalid(
            message=f"Network '{params.get('network')}' is not attached to container "
            f"'{container.uuid}'."
        )
    return net_id


def _neutron_attach(
    req: ApiRequest, container: models.Container, params: dict[str, Any]
) -> webob.Response:
    """network_attach with the kuryr driver: the request resolved in Neutron as at create."""
    neutron = neutron_api.for_request(req.context)
    nets = [{k: params[k] for k in ("network", "port", "fixed_ip") if params.get(k)}]
    if not nets[0]:
        api_common.require_params(params, ["network"])
    requested = neutron_requests.build(req.context, neutron, nets)[0]
    if requested["network"] in (container.addresses or {}):
        what = (
            f"Cannot attach port '{params['port']}' to container '{container.uuid}' "
            "because another port on the same network is already attached to this "
            "container."
            if params.get("port")
            else f"Network '{params.get('network')}' is already connected to container "
            f"'{container.uuid}'."
        )
        raise exception.Invalid(message=what)
    _api().network_attach(
        req.context,
        container,
        network=requested["network"],
        fixed_ip=requested["fixed_ip"] or None,
        requested_network=requested,
    )
    return null_reply(200)
