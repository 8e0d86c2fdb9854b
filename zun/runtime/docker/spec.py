"""Translate a Zun container row into the arguments of Docker's container create.

Pure functions: nothing here talks to the engine, so every rule (units, CPU pinning, labels,
hardening) is unit-tested on its own.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from zun.common import consts
from zun.conf import CONF

# Kubernetes' "restricted" profile: drop ALL, add back at most NET_BIND_SERVICE. Ordinary
# images that start as root and then step down (nginx, postgres, redis entrypoints...) also
# need the few capabilities of [docker]/cap_add; zun/conf/docker.py says why each one stays.
# Writable scratch space of a read-only container (programs expect /tmp and /run).
READ_ONLY_TMPFS = {"/tmp": "rw,nosuid,nodev,size=64m", "/run": "rw,nosuid,nodev,size=16m"}

_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([bkmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_UNIT_SHIFT = {"b": 0, "k": 10, "m": 20, "g": 30, "t": 40}
_NANO = 1_000_000_000


def engine_name(uuid: str) -> str:
    """Name of the engine container of a Zun container."""
    return f"{consts.ENGINE_NAME_PREFIX}{uuid}"


def memory_bytes(memory: str | int | float | None) -> int | None:
    """Bytes of a Zun memory value: a bare number means MiB (``'512'``), units b/k/m/g/t.

    Raises ValueError for anything else.
    """
    if memory is None or memory == "":
        return None
    if isinstance(memory, int | float):
        return int(memory * (1 << 20))
    match = _MEMORY.match(str(memory))
    if match is None:
        raise ValueError(f"invalid memory value {memory!r}")
    number, unit = match.groups()
    return int(float(number) * (1 << _UNIT_SHIFT[(unit or "m").lower()]))


def nano_cpus(cpu: float | str | None) -> int | None:
    if cpu is None or cpu == "":
        return None
    return int(round(float(cpu) * _NANO))


def _cpu_list(value: Any) -> str | None:
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, str):
        return value
    return ",".join(str(v) for v in sorted(value))


def cpuset_args(cpu_policy: str | None, cpuset: Any) -> dict[str, str]:
    """``cpuset_cpus``/``cpuset_mems`` for a ``dedicated`` container, else nothing.

    ``cpuset`` is the JSON column (text or already decoded): ``{"cpuset_cpus": [0, 1] or
    "0-1", "cpuset_mems": [0] or "0"}``.
    """
    if cpu_policy != consts.CPU_POLICY_DEDICATED or not cpuset:
        return {}
    if isinstance(cpuset, str):
        cpuset = json.loads(cpuset)
    args = {}
    cpus = _cpu_list(cpuset.get("cpuset_cpus"))
    mems = _cpu_list(cpuset.get("cpuset_mems"))
    if cpus:
        args["cpuset_cpus"] = cpus
    if mems:
        args["cpuset_mems"] = mems
    return args


def as_argv(value: list[str] | str | None) -> list[str] | None:
    """A command or entrypoint as argv: rows from before 1.20 hold a shell-quoted string."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, str):
        return shlex.split(value)
    return list(value)


def labels_for(uuid: str, user_labels: dict[str, str] | None) -> dict[str, str]:
    """User labels plus ours; ours win so that a user cannot disown or adopt a container."""
    labels = dict(user_labels or {})
    labels[consts.LABEL_CONTAINER_UUID] = uuid
    labels[consts.LABEL_MANAGED] = "true"
    return labels


def capability_list(value: Any) -> list[str]:
    """Capability names, upper case without ``CAP_``, from a list or a comma-separated text."""
    items = value.split(",") if isinstance(value, str) else list(value or [])
    names = []
    for item in items:
        name = str(item).strip().upper()
        name = name[4:] if name.startswith("CAP_") else name
        if name and name not in names:
            names.append(name)
    return names


def extra_capabilities(labels: dict[str, str] | None) -> list[str]:
    """Capabilities an admin granted this container (label ``zun.cap_add``, checked by the
    API's ``container:create:cap_add`` rule)."""
    return capability_list((labels or {}).get(consts.LABEL_CAP_ADD, ""))


def hardening_args(privileged: bool, extra_caps: list[str] | None = None) -> dict[str, Any]:
    """no-new-privileges, the capability set, a pids limit and the read-only root filesystem,
    from ``[docker]``; ``extra_caps``: what an admin added for this container.

    A privileged container gets none of them: it asked for the host's full power, and runs in
    the host's user namespace (an engine with userns-remap refuses it otherwise).
    """
    if privileged:
        return {"userns_mode": "host"}
    args: dict[str, Any] = {}
    if CONF.docker.security_opt_no_new_privileges:
        args["security_opt"] = ["no-new-privileges:true"]
    cap_drop = capability_list(CONF.docker.cap_drop)
    if cap_drop:
        args["cap_drop"] = cap_drop
    cap_add = capability_list(CONF.docker.cap_add)
    for name in extra_caps or []:
        if name not in cap_add:
            cap_add.append(name)
    if cap_add:
        args["cap_add"] = cap_add
    pids_limit = int(CONF.docker.pids_limit or 0)
    if pids_limit > 0:
        args["pids_limit"] = pids_limit
    if CONF.docker.read_only_root_filesystem:
        args["read_only"] = True
        args["tmpfs"] = dict(READ_ONLY_TMPFS)
    return args


def healthcheck_arg(healthcheck: dict[str, Any] | None) -> dict[str, Any] | None:
    """Zun's ``{cmd, interval, timeout, retries}`` (seconds) as Docker's healthcheck."""
    if not healthcheck or not healthcheck.get("cmd"):
        return None
    check: dict[str, Any] = {"test": ["CMD-SHELL", healthcheck["cmd"]]}
    for key in ("interval", "timeout"):
        if healthcheck.get(key):
            check[key] = int(healthcheck[key]) * _NANO
    if healthcheck.get("retries"):
        check["retries"] = int(healthcheck["retries"])
    return check


def restart_policy_arg(policy: dict[str, Any] | None) -> dict[str, Any] | None:
    if not policy or not policy.get("Name"):
        return None
    return {"Name": policy["Name"], "MaximumRetryCount": int(policy.get("MaximumRetryCount") or 0)}


def publish_host_ip() -> str:
    """The node address exposed ports are published on: ``[docker]/publish_host_ip``,
    which defaults to ``[DEFAULT]/my_ip``; never every address unless configured so."""
    value = CONF.docker.publish_host_ip or CONF.my_ip
    return str(value or "127.0.0.1")


def ports_args(exposed_ports: dict[str, Any] | None) -> tuple[list[Any], dict[str, Any]]:
    """``(ports, port_bindings)`` from ``{'80/tcp': {}}``.

    Every exposed port is published on the node's configured address on a port the engine
    picks (the embedded equivalent of the original's security-group rule opening the port):
    a user never picks the node's port, so no container can take over one the node uses, and
    nothing listens on addresses the operator did not choose.
    """
    ports: list[Any] = []
    bindings: dict[str, Any] = {}
    host_ip = publish_host_ip() if exposed_ports else None
    for key in exposed_ports or {}:
        port, _, proto = key.partition("/")
        proto = proto or "tcp"
        ports.append((int(port), proto))
        bindings[f"{port}/{proto}"] = (host_ip, None)
    return ports, bindings


def field_getter(container: Any) -> Any:
    """``get(name)`` over a dict or any object with attributes (a DB row), None when absent."""
    if isinstance(container, dict):
        return container.get
    return lambda name: getattr(container, name, None)


@dataclass
class CreateSpec:
    """Arguments of ``APIClient.create_container`` and ``create_host_config``."""

    create: dict[str, Any] = field(default_factory=dict)
    host_config: dict[str, Any] = field(default_factory=dict)
    # Endpoints to connect after create (Docker attaches only one network at create time).
    extra_endpoints: dict[str, dict[str, Any]] = field(default_factory=dict)
    first_endpoint: tuple[str, dict[str, Any]] | None = None


def build_create_spec(
    container: Any,
    image_ref: str,
    networking: dict[str, Any] | None = None,
    binds: list[str] | dict[str, Any] | None = None,
    mounts: list[Any] | None = None,
) -> CreateSpec:
    """Everything needed to create ``container`` (a row-like object) from ``image_ref``.

    ``networking``: ``{"network_mode": str, "endpoints": {network: {ipv4_address,
    ipv6_address, aliases, links}}, "mac_address": str, "publish": bool}``; the first endpoint
    is attached at create and the others are returned in ``extra_endpoints``; ``mac_address``
    is the container's (its first network's, a Neutron port's); ``publish`` False keeps
    ``exposed_ports`` exposed only (Neutron opens them with a security group instead of the
    node publishing them). ``binds``/``mounts`` are passed to
    Docker as they are (docker-py's formats).
    """
    get = field_getter(container)
    uuid = get("uuid")
    privileged = bool(get("privileged"))
    ports, port_bindings = ports_args(get("exposed_ports"))

    create: dict[str, Any] = {
        "image": image_ref,
        "name": engine_name(uuid),
        "command": as_argv(get("command")),
        "entrypoint": as_argv(get("entrypoint")),
        "environment": dict(get("environment") or {}) or None,
        "working_dir": get("workdir") or None,
        "hostname": get("hostname") or None,
        "labels": labels_for(uuid, get("labels")),
        "tty": bool(get("tty")),
        "stdin_open": bool(get("interactive")),
        "ports": ports or None,
        "healthcheck": healthcheck_arg(get("healthcheck")),
    }
    host: dict[str, Any] = {
        "privileged": privileged,
        "auto_remove": bool(get("auto_remove")),
        "runtime": get("runtime") or None,
        "restart_policy": restart_policy_arg(get("restart_policy")),
        "port_bindings": port_bindings or None,
        "binds": binds or None,
        "mounts": mounts or None,
    }
    mem = memory_bytes(get("memory"))
    if mem:
        host["mem_limit"] = mem
    pinning = cpuset_args(get("cpu_policy"), get("cpuset"))
    if pinning:
        host.update(pinning)
    else:
        cpus = nano_cpus(get("cpu"))
        if cpus:
            host["nano_cpus"] = cpus
    host.update(hardening_args(privileged, extra_capabilities(get("labels"))))

    spec = CreateSpec(
        create={k: v for k, v in create.items() if v is not None},
        host_config={k: v for k, v in host.items() if v is not None},
    )
    if networking:
        if networking.get("mac_address"):
            spec.create["mac_address"] = networking["mac_address"]
        if networking.get("publish") is False:
            spec.host_config.pop("port_bindings", None)
        endpoints = dict(networking.get("endpoints") or {})
        mode = networking.get("network_mode") or next(iter(endpoints), None)
        if mode:
            spec.host_config["network_mode"] = mode
        if endpoints:
            first = mode if mode in endpoints else next(iter(endpoints))
            spec.first_endpoint = (first, endpoints.pop(first))
            spec.extra_endpoints = endpoints
    return spec
