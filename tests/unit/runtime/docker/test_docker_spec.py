"""Container row -> Docker create arguments."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from zun.runtime.docker import spec

UUID = "0b1d2c3e-0000-4000-8000-00000000abcd"


def _row(**overrides: Any) -> SimpleNamespace:
    values: dict[str, Any] = {"uuid": UUID, "image": "busybox", "command": ["sleep", "60"]}
    values.update(overrides)
    return SimpleNamespace(**values)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("512", 512 << 20),
        (512, 512 << 20),
        ("512M", 512 << 20),
        ("512m", 512 << 20),
        ("1G", 1 << 30),
        ("1g", 1 << 30),
        ("100k", 100 << 10),
        ("2048b", 2048),
        ("1.5g", 3 << 29),
        ("512MiB", 512 << 20),
        (None, None),
        ("", None),
    ],
)
def test_memory_bytes(value: Any, expected: int | None) -> None:
    assert spec.memory_bytes(value) == expected


@pytest.mark.parametrize("value", ["abc", "12x", "-5", "1 0"])
def test_memory_bytes_rejects_garbage(value: str) -> None:
    with pytest.raises(ValueError):
        spec.memory_bytes(value)


def test_nano_cpus() -> None:
    assert spec.nano_cpus(0.5) == 500_000_000
    assert spec.nano_cpus("1.25") == 1_250_000_000
    assert spec.nano_cpus(None) is None


def test_engine_name_and_labels_cannot_be_spoofed() -> None:
    assert spec.engine_name(UUID) == f"zun-{UUID}"
    labels = spec.labels_for(UUID, {"zun.managed": "false", "zun.container.uuid": "x", "a": "b"})
    assert labels == {"a": "b", "zun.managed": "true", "zun.container.uuid": UUID}


def test_hardening_defaults_and_privileged_skips_them() -> None:
    assert spec.hardening_args(False) == {
        "security_opt": ["no-new-privileges:true"],
        "cap_drop": ["ALL"],
        "cap_add": [
            "CHOWN",
            "DAC_OVERRIDE",
            "FOWNER",
            "KILL",
            "NET_BIND_SERVICE",
            "SETGID",
            "SETUID",
        ],
        "pids_limit": 4096,
    }
    # A privileged container runs in the host's user namespace (userns-remap refuses it else).
    assert spec.hardening_args(True) == {"userns_mode": "host"}


def test_an_admin_granted_capability_is_added() -> None:
    extra = spec.extra_capabilities({"zun.cap_add": "cap_sys_ptrace, NET_ADMIN"})
    args = spec.hardening_args(False, extra)
    assert args["cap_add"][-2:] == ["SYS_PTRACE", "NET_ADMIN"]
    assert spec.extra_capabilities({"other": "x"}) == []


def test_dedicated_policy_pins_cpus_instead_of_a_quota() -> None:
    built = spec.build_create_spec(
        _row(cpu=2.0, cpu_policy="dedicated", cpuset='{"cpuset_cpus": [1, 0], "cpuset_mems": [0]}'),
        "busybox:latest",
    )
    assert built.host_config["cpuset_cpus"] == "0,1"
    assert built.host_config["cpuset_mems"] == "0"
    assert "nano_cpus" not in built.host_config


def test_shared_policy_uses_nano_cpus() -> None:
    built = spec.build_create_spec(
        _row(cpu=0.5, cpu_policy="shared", cpuset={"cpuset_cpus": "0"}), "busybox:latest"
    )
    assert built.host_config["nano_cpus"] == 500_000_000
    assert "cpuset_cpus" not in built.host_config


def test_full_row() -> None:
    row = _row(
        command="sh -c 'echo hi'",
        entrypoint=["/bin/sh"],
        environment={"A": "1"},
        workdir="/tmp",
        hostname="h1",
        labels={"x": "y"},
        tty=True,
        interactive=True,
        exposed_ports={"80/tcp": {}, "53/udp": {"HostPort": "5353"}},
        healthcheck={"cmd": "true", "interval": 5, "timeout": 2, "retries": 3},
        restart_policy={"Name": "on-failure", "MaximumRetryCount": "3"},
        memory="64",
        auto_remove=False,
        privileged=False,
        runtime="runc",
    )
    built = spec.build_create_spec(row, "busybox:latest")
    create, host = built.create, built.host_config
    assert create["name"] == f"zun-{UUID}"
    assert create["command"] == ["sh", "-c", "echo hi"]
    assert create["entrypoint"] == ["/bin/sh"]
    assert create["environment"] == {"A": "1"}
    assert create["working_dir"] == "/tmp"
    assert create["hostname"] == "h1"
    assert create["tty"] is True and create["stdin_open"] is True
    assert sorted(create["ports"]) == [(53, "udp"), (80, "tcp")]
    assert create["healthcheck"] == {
        "test": ["CMD-SHELL", "true"],
        "interval": 5_000_000_000,
        "timeout": 2_000_000_000,
        "retries": 3,
    }
    # Every exposed port is published on an engine-chosen node port; a requested one is not used.
    # ... on the node's configured address ([docker]/publish_host_ip = $my_ip), not 0.0.0.0.
    address = spec.publish_host_ip()
    assert address != "0.0.0.0"
    assert host["port_bindings"] == {"53/udp": (address, None), "80/tcp": (address, None)}
    assert host["restart_policy"] == {"Name": "on-failure", "MaximumRetryCount": 3}
    assert host["mem_limit"] == 64 << 20
    assert host["runtime"] == "runc"
    assert host["security_opt"] == ["no-new-privileges:true"]


def test_dict_rows_work_too() -> None:
    built = spec.build_create_spec({"uuid": UUID, "privileged": True}, "img")
    assert built.create["name"] == f"zun-{UUID}"
    assert built.host_config["privileged"] is True
    assert "cap_drop" not in built.host_config


def test_networking_first_endpoint_at_create_others_after() -> None:
    built = spec.build_create_spec(
        _row(),
        "img",
        networking={
            "endpoints": {"net-a": {"aliases": ["a"]}, "net-b": {"ipv4_address": "10.0.0.5"}}
        },
    )
    assert built.host_config["network_mode"] == "net-a"
    assert built.first_endpoint == ("net-a", {"aliases": ["a"]})
    assert built.extra_endpoints == {"net-b": {"ipv4_address": "10.0.0.5"}}


def test_network_mode_none() -> None:
    built = spec.build_create_spec(_row(), "img", networking={"network_mode": "none"})
    assert built.host_config["network_mode"] == "none"
    assert built.first_endpoint is None


def test_old_rows_with_string_commands_are_split_shell_style() -> None:
    assert spec.as_argv('"sh" "-c" "exit 3"') == ["sh", "-c", "exit 3"]
    assert spec.as_argv([]) is None
