"""Small pure helpers shared by the API and the nodes.

Each function here reproduces the original's observable behaviour (messages included) and is
driven by ``tests/contract/vectors.json`` in ``tests/unit/common``.
"""

from __future__ import annotations

import datetime
from typing import Any

from oslo_utils import strutils

from zun.common import consts, exception
from zun.conf import CONF

# Container statuses in which each action is allowed.
VALID_STATES: dict[str, list[str]] = {
    "add_security_group": [consts.CREATED, consts.RUNNING, consts.STOPPED, consts.PAUSED],
    "attach": [consts.RUNNING],
    "commit": [consts.RUNNING, consts.STOPPED, consts.PAUSED],
    "delete": [consts.CREATED, consts.ERROR, consts.STOPPED, consts.DELETED, consts.DEAD],
    "delete_after_stop": [
        consts.RUNNING,
        consts.CREATED,
        consts.ERROR,
        consts.STOPPED,
        consts.DELETED,
        consts.DEAD,
    ],
    "delete_force": [
        consts.CREATED,
        consts.CREATING,
        consts.ERROR,
        consts.RUNNING,
        consts.STOPPED,
        consts.UNKNOWN,
        consts.DELETED,
        consts.DEAD,
        consts.RESTARTING,
        consts.REBUILDING,
        consts.DELETING,
    ],
    "execute": [consts.RUNNING],
    "execute_resize": [consts.RUNNING],
    "get_archive": [consts.CREATED, consts.PAUSED, consts.RUNNING, consts.STOPPED],
    "kill": [consts.RUNNING],
    "logs": [
        consts.CREATED,
        consts.ERROR,
        consts.PAUSED,
        consts.RUNNING,
        consts.STOPPED,
        consts.UNKNOWN,
    ],
    "pause": [consts.RUNNING],
    "put_archive": [consts.CREATED, consts.PAUSED, consts.RUNNING, consts.STOPPED],
    "reboot": [consts.CREATED, consts.RUNNING, consts.STOPPED, consts.ERROR],
    "rebuild": [consts.CREATED, consts.RUNNING, consts.STOPPED, consts.ERROR],
    "remove_security_group": [consts.CREATED, consts.RUNNING, consts.STOPPED, consts.PAUSED],
    "resize": [consts.RUNNING],
    "resize_container": [consts.CREATED, consts.RUNNING, consts.STOPPED, consts.PAUSED],
    "start": [consts.CREATED, consts.STOPPED, consts.ERROR],
    "stats": [consts.RUNNING],
    "stop": [consts.RUNNING],
    "top": [consts.RUNNING],
    "unpause": [consts.PAUSED],
    "update": [consts.CREATED, consts.RUNNING, consts.STOPPED, consts.PAUSED],
}


def validate_container_state(container: Any, action: str) -> None:
    """Raise 409 InvalidStateException unless ``container.status`` allows ``action``.

    ``container`` is anything with ``uuid`` and ``status`` attributes (a DB row, an object).
    An unknown ``action`` is a programming error and raises KeyError.
    """
    if container.status not in VALID_STATES[action]:
        raise exception.InvalidStateException(
            id=container.uuid, action=action, actual_state=container.status
        )


def check_for_restart_policy(container_dict: dict[str, Any]) -> None:
    """Validate and normalise ``container_dict['restart_policy']`` in place.

    ``MaximumRetryCount`` defaults to ``'0'``, is forced to ``'0'`` for ``no`` and must be 0
    for ``always`` and ``unless-stopped``. A non-integer count for ``on-failure`` raises
    ValueError, as in Zun (the API schema rejects it before).
    """
    policy = container_dict.get("restart_policy")
    if not policy:
        return
    name = policy.get("Name")
    if name == "no":
        policy["MaximumRetryCount"] = "0"
    elif name in ("always", "unless-stopped"):
        count = policy.setdefault("MaximumRetryCount", "0")
        if int(count) != 0:
            raise exception.InvalidValue(
                message=f"maximum retry count not valid with restart policy of {name}"
            )
    elif name == "on-failure":
        int(policy.setdefault("MaximumRetryCount", "0"))


def build_exposed_ports(ports: dict[str, Any]) -> dict[str, Any]:
    """Normalise ``{'port[/proto]': value}`` to ``{'port/proto': value}`` (tcp by default)."""
    exposed: dict[str, Any] = {}
    for key, value in ports.items():
        parts = key.split("/")
        if len(parts) == 1:
            port, protocol = parts[0], "tcp"
        elif len(parts) == 2:
            port, protocol = parts
        else:
            raise exception.InvalidValue(message=f"value {key} is invalid as publish port.")
        if protocol not in ("tcp", "udp"):
            raise exception.InvalidValue(message=f"value {protocol} is an invalid protocol")
        try:
            int(port)
        except ValueError:
            raise exception.InvalidValue(
                message=f"value {port} is invalid as publish port."
            ) from None
        exposed[f"{port}/{protocol}"] = value
    return exposed


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def format_status_detail(status_time: str, now: datetime.datetime | None = None) -> str | None:
    """Age of a Docker timestamp in its largest unit: ``'3 days'``, ``'15 mins'``...

    ``''`` for Docker's zero time (never happened), None for an unparsable value or an age of
    zero. Sub-second digits are ignored; a time in the future gives ``'-1 days'`` as in Zun.
    ``now`` is naive UTC (defaults to the current time).
    """
    try:
        when = datetime.datetime.strptime(status_time[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    if when == datetime.datetime(1, 1, 1):
        return ""
    delta = (now or _utcnow()) - when
    if delta.days != 0:
        return f"{delta.days} days"
    hours, rest = divmod(delta.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours} hours"
    if minutes:
        return f"{minutes} mins"
    if seconds:
        return f"{seconds} seconds"
    return None


def is_all_projects(search_opts: dict[str, Any]) -> bool:
    """Strict boolean of ``search_opts['all_projects']``; absent or empty is False."""
    value = search_opts.get("all_projects")
    if not value:
        return False
    if isinstance(value, bool):
        return value
    try:
        return strutils.bool_from_string(value, strict=True)
    except ValueError:
        valid = ", ".join(strutils.TRUE_STRINGS + strutils.FALSE_STRINGS)
        raise exception.InvalidValue(message=f"Valid all_projects values are: {valid}") from None


def validate_limit(limit: int | str | None, max_limit: int | None = None) -> int:
    """A page size: positive, capped by ``[api]/max_limit`` (1000), which is also the default."""
    if max_limit is None:
        max_limit = int(CONF.api.max_limit)
    if limit is None:
        return max_limit
    try:
        value = int(limit)
    except (TypeError, ValueError):
        value = 0
    if value <= 0:
        raise exception.InvalidValue(message="Limit must be positive integer")
    return min(value, max_limit)


def validate_sort_dir(sort_dir: str) -> str:
    if sort_dir not in ("asc", "desc"):
        raise exception.InvalidValue(
            message=f"Invalid sort direction: {sort_dir}. Acceptable values are 'asc' or 'desc'"
        )
    return sort_dir
