"""``/v1/containers/<ident>/...``: the routes answered by the node (RPC calls, rest-api.md
§6.6): logs, execute, consoles (attach, resize), top, archives, stats, network_list.

The order of checks and the parameters are those of :mod:`zun.api.handlers.containers`, whose
helpers these handlers share.
"""

from __future__ import annotations

import base64
import binascii
import shlex
from typing import Any

import webob

from zun.api import archive_input
from zun.api import common as api_common
from zun.api.handlers.containers import (
    ITEM,
    _api,
    _bool,
    _lookup,
    _opt,
    _opt_int,
    _validate_merged_query,
)
from zun.api.request import ApiRequest
from zun.api.response import json_reply, null_reply
from zun.api.routing import route
from zun.common import exception
from zun.common import utils as zun_utils
from zun.conf import CONF
from zun.console import tokens as console_tokens
from zun.network import addresses as net_addresses

# --- calls --------------------------------------------------------------------------------------


@route("GET", ITEM + "/logs")
def container_logs(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_query(req, "containers.query_param_logs")
    container = _lookup(req, container_ident, "container:logs")
    tail = _opt(params.get("tail"))
    since = _opt(params.get("since"))
    logs = _api().call(
        container,
        "logs",
        lambda host: _api().rpcapi.container_logs(
            req.context,
            host,
            container.uuid,
            stdout=_bool(params, "stdout", True),
            stderr=_bool(params, "stderr", True),
            timestamps=_bool(params, "timestamps", False),
            tail=tail if tail not in (None, "") else "all",
            since=since,
        ),
    )
    return json_reply(logs)


def _check_command_length(command: Any) -> None:
    limit = CONF.api.max_exec_command_length
    if isinstance(command, str) and len(command) > limit:
        raise exception.InvalidValue(
            message=f"The command is {len(command)} characters long; at most {limit} are "
            "accepted ([api]/max_exec_command_length)."
        )


@route("POST", ITEM + "/execute")
def execute(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_query(req, "containers.query_param_execute_command")
    api_common.require_params(params, ["command"])
    _check_command_length(params["command"])
    container = _lookup(req, container_ident, "container:execute")
    run = _bool(params, "run", True)
    interactive = _bool(params, "interactive", False)
    try:
        command = shlex.split(params["command"])
    except ValueError as exc:
        raise exception.InvalidValue(message=f"Invalid command: {exc}") from None
    result = (
        _api().call(
            container,
            "execute",
            lambda host: _api().rpcapi.container_exec(
                req.context, host, container.uuid, command=command, run=run, interactive=interactive
            ),
        )
        or {}
    )
    if run:
        body = {
            "output": result.get("output"),
            "exit_code": result.get("exit_code"),
            "exec_id": None,
            "proxy_url": None,
        }
    else:
        exec_id = result.get("exec_id")
        url = result.get("proxy_url") or console_tokens.console_url(
            container.uuid, result.get("token", ""), exec_id
        )
        body = {"output": None, "exit_code": None, "exec_id": exec_id, "proxy_url": url}
    return json_reply(body)


@route("POST", ITEM + "/execute_resize")
def execute_resize(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_query(req, "containers.query_param_execute_resize")
    api_common.require_params(params, ["exec_id"])
    container = _lookup(req, container_ident, "container:execute_resize")
    _api().call(
        container,
        "execute_resize",
        lambda host: _api().rpcapi.container_exec_resize(
            req.context,
            host,
            container.uuid,
            exec_id=params["exec_id"],
            height=_opt_int(params.get("h")),
            width=_opt_int(params.get("w")),
        ),
    )
    return null_reply(200)


@route("GET", ITEM + "/attach")
def attach(req: ApiRequest, container_ident: str) -> webob.Response:
    container = _lookup(req, container_ident, "container:attach")
    zun_utils.validate_container_state(container, "attach")
    if not container.interactive:
        raise exception.NoInteractiveFlag(
            msg=f"Cannot attach to container {container.uuid}: it was not created with the "
            "interactive flag."
        )
    result = _api().call(
        container,
        None,
        lambda host: _api().rpcapi.container_attach(req.context, host, container.uuid),
    )
    if isinstance(result, dict):
        url = result.get("url") or console_tokens.console_url(
            container.uuid, result.get("token", "")
        )
    else:
        url = result
    return json_reply(url)


@route("POST", ITEM + "/resize")
def resize(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_query(req, "containers.query_param_resize")
    container = _lookup(req, container_ident, "container:resize")
    _api().call(
        container,
        "resize",
        lambda host: _api().rpcapi.container_resize(
            req.context,
            host,
            container.uuid,
            height=_opt_int(params.get("h")),
            width=_opt_int(params.get("w")),
        ),
    )
    return null_reply(200)


@route("GET", ITEM + "/top")
def top(req: ApiRequest, container_ident: str) -> webob.Response:
    params = _validate_merged_query(req, "containers.query_param_top")
    container = _lookup(req, container_ident, "container:top")
    result = _api().call(
        container,
        "top",
        lambda host: _api().rpcapi.container_top(
            req.context, host, container.uuid, ps_args=_opt(params.get("ps_args"))
        ),
    )
    return json_reply(result)


# Linux's NAME_MAX: the engine fails on a longer component, after the request reached it.
_NAME_MAX = 255


def _check_archive_path(path: Any) -> None:
    """400 for a path the engine cannot take: not text, empty, too long, NUL inside."""
    if not isinstance(path, str) or not path:
        raise exception.InvalidValue(message="'path' must be a non-empty string.")
    limit = CONF.api.max_archive_path_length
    if len(path) > limit:
        raise exception.InvalidValue(
            message=f"The path is {len(path)} characters long; at most {limit} are accepted "
            "([api]/max_archive_path_length)."
        )
    if "\x00" in path:
        raise exception.InvalidValue(message="The path contains a NUL character.")
    longest = max(len(part.encode("utf-8")) for part in path.split("/"))
    if longest > _NAME_MAX:
        raise exception.InvalidValue(
            message=f"A component of the path is {longest} bytes long; at most {_NAME_MAX} "
            "are accepted."
        )


def _get_archive(req: ApiRequest, container_ident: str, encoded: bool) -> webob.Response:
    params = req.merged_params()
    api_common.require_params(params, ["path"])
    _check_archive_path(params["path"])
    container = _lookup(req, container_ident, "container:get_archive")
    result = (
        _api().call(
            container,
            "get_archive",
            lambda host: _api().rpcapi.container_get_archive(
                req.context, host, container.uuid, path=params["path"]
            ),
        )
        or {}
    )
    data = result.get("data")
    if not encoded and isinstance(data, str):
        # Before 1.25 the tar went out as a string: one character per byte.
        data = base64.b64decode(data).decode("latin-1")
    return json_reply({"data": data, "stat": result.get("stat")})


@route("GET", ITEM + "/get_archive", "1.1", "1.24")
def get_archive_raw(req: ApiRequest, container_ident: str) -> webob.Response:
    return _get_archive(req, container_ident, encoded=False)


@route("GET", ITEM + "/get_archive", "1.25")
def get_archive(req: ApiRequest, container_ident: str) -> webob.Response:
    return _get_archive(req, container_ident, encoded=True)


def _put_archive(req: ApiRequest, container_ident: str, encoded: bool) -> webob.Response:
    params = req.merged_params()
    api_common.require_params(params, ["path", "data"])
    _check_archive_path(params["path"])
    container = _lookup(req, container_ident, "container:put_archive")
    data = params["data"]
    if not isinstance(data, str):
        raise exception.Base64Exception()
    if not encoded:
        try:
            raw = data.encode("latin-1")
        except UnicodeEncodeError:
            raw = data.encode("utf-8")
        data = base64.b64encode(raw).decode("ascii")
    else:
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise exception.Base64Exception() from None
    archive_input.check_tar(raw)
    _api().call(
        container,
        "put_archive",
        lambda host: _api().rpcapi.container_put_archive(
            req.context, host, container.uuid, path=params["path"], data_b64=data
        ),
    )
    return null_reply(200)


@route("POST", ITEM + "/put_archive", "1.1", "1.24")
def put_archive_raw(req: ApiRequest, container_ident: str) -> webob.Response:
    return _put_archive(req, container_ident, encoded=False)


@route("POST", ITEM + "/put_archive", "1.25")
def put_archive(req: ApiRequest, container_ident: str) -> webob.Response:
    return _put_archive(req, container_ident, encoded=True)


@route("GET", ITEM + "/stats")
def stats(req: ApiRequest, container_ident: str) -> webob.Response:
    container = _lookup(req, container_ident, "container:stats")
    result = _api().call(
        container,
        "stats",
        lambda host: _api().rpcapi.container_stats(req.context, host, container.uuid),
    )
    return json_reply(result)


# --- network_list (no policy in Zun: whoever sees the container sees its addresses) ---------------


def _network_list(req: ApiRequest, container_ident: str, legacy: bool) -> webob.Response:
    container = _lookup(req, container_ident, None)
    entries = net_addresses.network_list_entries(container.addresses, legacy=legacy)
    return json_reply({"networks": entries})


@route("GET", ITEM + "/network_list", "1.13", "1.17")
def network_list_legacy(req: ApiRequest, container_ident: str) -> webob.Response:
    return _network_list(req, container_ident, legacy=True)


@route("GET", ITEM + "/network_list", "1.18")
def network_list(req: ApiRequest, container_ident: str) -> webob.Response:
    return _network_list(req, container_ident, legacy=False)
