"""Every option of Zun's zun.conf namespace exists here with its group, name, type and default.

The expectations come from tests/contract/config-options.md; the few places
where the rewrite departs from Zun on purpose are listed in DEVIATIONS and
checked as such.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg, types
from unit.conf import _conf_reference

import zun.conf
from zun.conf import opts as zun_opts

REFERENCE = _conf_reference.load()

TYPES: dict[str, type] = {
    "Str": types.String,
    "Int": types.Integer,
    "Float": types.Float,
    "Bool": types.Boolean,
    "List": types.List,
    "MultiStr": types.MultiString,
    "Dict": types.Dict,
    "Port": types.Port,
    "IP": types.IPAddress,
    "HostAddress": types.HostAddress,
    "URI": types.URI,
}

# Options whose defaults are computed on the host: the sample shows a placeholder.
HOST_DEPENDENT = {("DEFAULT", "my_ip"), ("DEFAULT", "host"), ("DEFAULT", "pybasedir")}

# keystoneauth1 registers the plugin options itself when [keystone_auth] is loaded,
# because their definitions depend on auth_type; they are checked in list_opts only.
REGISTERED_ON_LOAD = {
    ("keystone_auth", o.name)
    for o in REFERENCE
    if o.group == "keystone_auth" and o.name not in ("auth_type", "auth_section")
}

DEVIATIONS: dict[tuple[str, str], dict[str, Any]] = {
    # Zun's default ($pybasedir) put mutable state inside the installed package.
    ("DEFAULT", "state_path"): {"default": "/var/lib/zun"},
    # Registered in [database] by Zun too; only its sample listed it under [DEFAULT].
    ("DEFAULT", "mysql_engine"): {"group": "database"},
    # Zun accepted any string; the rewrite lists the drivers, adding "docker", its default (the
    # embedded mode needs no Neutron; "kuryr" is the original's Neutron networking).
    ("network", "driver"): {"choices": ("kuryr", "cni", "docker"), "default": "docker"},
    # Zun saw a dead node after 120-180 s; with report_interval 5 the rewrite sees it in
    # 20-25 s (docs/configuration.md).
    ("DEFAULT", "service_down_time"): {"default": 25},
}

ADDED = {
    ("DEFAULT", "state_path"),  # default changed, see DEVIATIONS
    ("api", "auth_strategy"),
    ("websocket_proxy", "token_ttl"),
    ("websocket_proxy", "relay_host"),
    ("websocket_proxy", "relay_port"),
    ("websocket_proxy", "relay_cert"),
    ("websocket_proxy", "relay_key"),
    ("websocket_proxy", "relay_ca_file"),
    ("DEFAULT", "sandbox_fallback_image"),
    ("DEFAULT", "sandbox_fallback_command"),
    ("DEFAULT", "capsule_init_timeout"),
    ("compute", "reap_grace_period"),
    ("scheduler", "weigher"),
    ("scheduler", "use_placement"),
    ("placement_client", "endpoint_override"),
    ("docker", "security_opt_no_new_privileges"),
    ("docker", "cap_drop"),
    ("docker", "cap_add"),
    ("docker", "publish_host_ip"),
    ("docker", "read_only_root_filesystem"),
    ("docker", "pids_limit"),
    ("DEFAULT", "report_interval"),
    ("compute", "max_create_attempts"),
    ("compute", "engine_probe_timeout"),
    ("compute", "node_monitor_interval"),
    ("compute", "evacuate_auto_heal_after"),
    ("api", "max_json_depth"),
    ("api", "max_exec_command_length"),
    ("api", "max_archive_path_length"),
    ("api", "commit_repository_prefix"),
    ("api", "max_committed_images"),
}


# Registered by Zun too, but only listed by the rewrite (the sample documents them).
KEYSTONE_SESSION = {("keystone_auth", o.dest) for o in ks_loading.get_session_conf_options()}


def _listed() -> dict[tuple[str, str], cfg.Opt]:
    return {(group, opt.dest): opt for group, opts in zun_opts.list_opts() for opt in opts}


def _registered(group: str, name: str) -> cfg.Opt:
    info = zun.conf.CONF._get_opt_info(name, None if group == "DEFAULT" else group)
    return info["opt"]


def _expected_default(ref: _conf_reference.RefOption) -> Any:
    raw = ref.default
    if raw is None:
        return None
    if ref.kind in ("List", "MultiStr", "Dict"):
        return json.loads(raw)
    if ref.kind in ("Int", "Port"):
        return int(raw)
    if ref.kind == "Float":
        return float(raw)
    if ref.kind == "Bool":
        return {"true": True, "false": False}[raw]
    return raw


def _id(ref: _conf_reference.RefOption) -> str:
    return f"{ref.group}.{ref.name}"


def test_reference_has_all_177_options_in_21_groups() -> None:
    assert len(REFERENCE) == 177
    assert len({o.group for o in REFERENCE}) == 21


@pytest.mark.parametrize("ref", REFERENCE, ids=_id)
def test_option_matches_reference(ref: _conf_reference.RefOption) -> None:
    deviation = DEVIATIONS.get((ref.group, ref.name), {})
    group = deviation.get("group", ref.group)
    listed = _listed()
    assert (group, ref.name) in listed, f"[{group}]/{ref.name} missing from list_opts()"
    opt = listed[(group, ref.name)]
    if (ref.group, ref.name) not in REGISTERED_ON_LOAD:
        registered = _registered(group, ref.name)
        assert registered == opt, "CONF holds a different definition than list_opts()"

    if ref.kind == "Opt":
        # keystoneauth1's loader options are plain cfg.Opt of type str.
        assert type(opt) is cfg.Opt
        assert opt.type is str
    else:
        assert type(opt.type) is TYPES[ref.kind], opt.type

    if (ref.group, ref.name) in HOST_DEPENDENT:
        assert opt.sample_default == ref.default
        assert opt.default
    elif "default" in deviation:
        assert opt.default == deviation["default"]
    else:
        assert opt.default == _expected_default(ref)

    if ref.minimum is not None or ref.maximum is not None:
        assert opt.type.min == _expected_default_number(ref.kind, ref.minimum)
        assert opt.type.max == _expected_default_number(ref.kind, ref.maximum)
    elif ref.kind in ("Int", "Float"):
        assert opt.type.min is None and opt.type.max is None

    expected_choices = deviation.get("choices", ref.choices)
    choices = getattr(opt.type, "choices", None)
    if expected_choices is None:
        assert not choices
    else:
        assert tuple(choices) == expected_choices


def _expected_default_number(kind: str, raw: str | None) -> float | int | None:
    if raw is None:
        return None
    return float(raw) if kind == "Float" else int(raw)


def test_nothing_listed_beyond_reference_and_our_additions() -> None:
    reference = {
        (DEVIATIONS.get((o.group, o.name), {}).get("group", o.group), o.name) for o in REFERENCE
    }
    extra = set(_listed()) - reference
    assert extra == (ADDED - {("DEFAULT", "state_path")}) | KEYSTONE_SESSION


@pytest.mark.parametrize("key", sorted(ADDED), ids=lambda k: f"{k[0]}.{k[1]}")
def test_our_additions_say_so_in_their_help(key: tuple[str, str]) -> None:
    opt = _listed()[key]
    assert "rewrite" in opt.help, opt.help


def test_added_option_defaults() -> None:
    conf = zun.conf.CONF
    assert conf.api.auth_strategy == "keystone"
    assert conf.websocket_proxy.token_ttl == 120
    assert conf.compute.reap_grace_period == 600
    assert conf.docker.security_opt_no_new_privileges is True
    assert conf.docker.pids_limit == 4096
    # Kubernetes' "restricted" profile, plus what ordinary images need (none of the risky ones).
    assert conf.docker.cap_drop == ["ALL"]
    assert set(conf.docker.cap_add) == {
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "KILL",
        "NET_BIND_SERVICE",
        "SETGID",
        "SETUID",
    }
    assert not {
        "NET_RAW",
        "MKNOD",
        "AUDIT_WRITE",
        "SYS_CHROOT",
        "SETFCAP",
        "SETPCAP",
        "FSETID",
        "SYS_ADMIN",
    } & set(conf.docker.cap_add)
    assert conf.docker.publish_host_ip == conf.my_ip
    assert conf.docker.read_only_root_filesystem is False
    assert (
        conf.api.max_json_depth,
        conf.api.max_exec_command_length,
        conf.api.max_archive_path_length,
    ) == (32, 65536, 4096)


def test_database_keeps_oslo_db_options_without_sqlite_default() -> None:
    assert zun.conf.CONF.database.connection is None
    assert zun.conf.CONF.database.max_retries == 10
    assert zun.conf.CONF.database.mysql_engine == "InnoDB"
