"""CIS Docker Benchmark v1.6.0, section 5 (Container Runtime), scored from a real container.

Each recommendation whose audit reads the container's ``docker inspect`` (or its processes,
or the engine's ``docker info``) is checked as the benchmark's audit describes it. The ones
that are about operator practice rather than a container (5.8 "only needed ports", 5.18
ulimits "if needed", 5.22/5.23 ``docker exec`` usage, 5.27 image freshness, 5.24 cgroup
"confirmed") are listed as not scored. 5.1 AppArmor and 5.2 SELinux count only when the engine
has that security module (neither is present on the project's machines).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SENSITIVE_DIRS = ("/", "/boot", "/dev", "/etc", "/lib", "/proc", "/sys", "/usr")
# The documented set of kept capabilities (docs/configuration.md); 5.3 passes when the
# container drops ALL and adds back nothing beyond it.
KEPT_CAPABILITIES = {
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "KILL",
    "NET_BIND_SERVICE",
    "SETGID",
    "SETUID",
}

NOT_SCORED = {
    "5.8": "only needed ports are open (a judgement on the image, not measurable)",
    "5.18": "default ulimit overwritten if needed (a judgement)",
    "5.22": "docker exec with --privileged (operator practice; Zun's exec never sets it)",
    "5.23": "docker exec with --user=root (operator practice)",
    "5.24": "cgroup usage is confirmed (manual review)",
    "5.27": "docker commands use the latest image (operator practice)",
}


@dataclass
class Result:
    item: str
    title: str
    passed: bool
    detail: str = ""


def _caps(values: list[str] | None) -> set[str]:
    return {v.upper().removeprefix("CAP_") for v in values or []}


def _checks(
    inspect: dict[str, Any], info: dict[str, Any], processes: list[str]
) -> list[tuple[str, str, Callable[[], tuple[bool, str]]]]:
    host = inspect["HostConfig"]
    ports = (inspect.get("NetworkSettings") or {}).get("Ports") or {}
    mounts = inspect.get("Mounts") or []
    security = " ".join(str(o) for o in info.get("SecurityOptions") or [])
    bindings = [b for b in (binding for v in ports.values() for binding in (v or []))]

    def caps() -> tuple[bool, str]:
        drop, add = _caps(host.get("CapDrop")), _caps(host.get("CapAdd"))
        return (
            "ALL" in drop and add <= KEPT_CAPABILITIES,
            f"CapDrop={sorted(drop)} CapAdd={sorted(add)}",
        )

    def sensitive_mounts() -> tuple[bool, str]:
        bad = [
            m["Source"]
            for m in mounts
            if m.get("Type") == "bind" and m.get("Source") in SENSITIVE_DIRS
        ]
        return not bad, f"{bad}"

    checks: list[tuple[str, str, Callable[[], tuple[bool, str]]]] = [
        ("5.3", "Linux kernel capabilities are restricted", caps),
        (
            "5.4",
            "privileged containers are not used",
            lambda: (not host.get("Privileged"), f"Privileged={host.get('Privileged')}"),
        ),
        ("5.5", "sensitive host system directories are not mounted", sensitive_mounts),
        (
            "5.6",
            "sshd is not run within containers",
            lambda: (not any("sshd" in p for p in processes), f"{len(processes)} processes"),
        ),
        (
            "5.7",
            "privileged ports are not mapped",
            lambda: (
                all(int(b.get("HostPort") or 0) >= 1024 for b in bindings),
                f"{[b.get('HostPort') for b in bindings]}",
            ),
        ),
        (
            "5.9",
            "the host's network namespace is not shared",
            lambda: (host.get("NetworkMode") != "host", f"NetworkMode={host.get('NetworkMode')}"),
        ),
        (
            "5.10",
            "memory usage is limited",
            lambda: (int(host.get("Memory") or 0) > 0, f"Memory={host.get('Memory')}"),
        ),
        (
            "5.11",
            "CPU priority (shares) is set",
            lambda: (
                int(host.get("CpuShares") or 0) not in (0, 1024),
                f"CpuShares={host.get('CpuShares')} NanoCpus={host.get('NanoCpus')}",
            ),
        ),
        (
            "5.12",
            "the root filesystem is mounted read-only",
            lambda: (
                bool(host.get("ReadonlyRootfs")),
                f"ReadonlyRootfs={host.get('ReadonlyRootfs')}",
            ),
        ),
        (
            "5.13",
            "incoming traffic is bound to a specific host interface",
            lambda: (
                all(b.get("HostIp") not in ("", "0.0.0.0", "::") for b in bindings),
                f"{[b.get('HostIp') for b in bindings]}",
            ),
        ),
        (
            "5.14",
            "'on-failure' restart policy is at most 5",
            lambda: (
                (host.get("RestartPolicy") or {}).get("Name") in ("", "no", None)
                or (
                    (host.get("RestartPolicy") or {}).get("Name") == "on-failure"
                    and int((host.get("RestartPolicy") or {}).get("MaximumRetryCount") or 0) <= 5
                ),
                f"{host.get('RestartPolicy')}",
            ),
        ),
        (
            "5.15",
            "the host's process namespace is not shared",
            lambda: (host.get("PidMode") != "host", f"PidMode={host.get('PidMode')}"),
        ),
        (
            "5.16",
            "the host's IPC namespace is not shared",
            lambda: (host.get("IpcMode") != "host", f"IpcMode={host.get('IpcMode')}"),
        ),
        (
            "5.17",
            "host devices are not exposed",
            lambda: (not host.get("Devices"), f"Devices={host.get('Devices')}"),
        ),
        (
            "5.19",
            "mount propagation is not shared",
            lambda: (
                all(m.get("Propagation") not in ("shared", "rshared") for m in mounts),
                f"{[m.get('Propagation') for m in mounts]}",
            ),
        ),
        (
            "5.20",
            "the host's UTS namespace is not shared",
            lambda: (host.get("UTSMode") != "host", f"UTSMode={host.get('UTSMode')}"),
        ),
        (
            "5.21",
            "the default seccomp profile is not disabled",
            lambda: (
                not any(
                    "seccomp:unconfined" in str(o) or "seccomp=unconfined" in str(o)
                    for o in host.get("SecurityOpt") or []
                ),
                f"SecurityOpt={host.get('SecurityOpt')}",
            ),
        ),
        (
            "5.25",
            "the container cannot acquire additional privileges",
            lambda: (
                any("no-new-privileges" in str(o) for o in host.get("SecurityOpt") or []),
                f"SecurityOpt={host.get('SecurityOpt')}",
            ),
        ),
        (
            "5.26",
            "container health is checked at runtime",
            lambda: (
                bool((inspect.get("Config") or {}).get("Healthcheck")),
                "no healthcheck unless the user asks for one",
            ),
        ),
        (
            "5.28",
            "the PIDs cgroup limit is used",
            lambda: (int(host.get("PidsLimit") or 0) > 0, f"PidsLimit={host.get('PidsLimit')}"),
        ),
        (
            "5.29",
            "Docker's default bridge docker0 is not used",
            lambda: (
                "bridge" not in ((inspect.get("NetworkSettings") or {}).get("Networks") or {})
                and host.get("NetworkMode") not in ("bridge", "default"),
                f"NetworkMode={host.get('NetworkMode')}",
            ),
        ),
        (
            "5.30",
            "the host's user namespace is not shared",
            lambda: (host.get("UsernsMode") != "host", f"UsernsMode={host.get('UsernsMode')!r}"),
        ),
        (
            "5.31",
            "the Docker socket is not mounted",
            lambda: (
                not any("docker.sock" in str(m.get("Source")) for m in mounts),
                f"{[m.get('Source') for m in mounts]}",
            ),
        ),
    ]
    if "apparmor" in security:
        checks.insert(
            0,
            (
                "5.1",
                "an AppArmor profile is enabled",
                lambda: (
                    bool(inspect.get("AppArmorProfile")),
                    f"AppArmorProfile={inspect.get('AppArmorProfile')!r}",
                ),
            ),
        )
    if "selinux" in security:
        checks.insert(
            0,
            (
                "5.2",
                "SELinux security options are set",
                lambda: (
                    any("label" in str(o) for o in host.get("SecurityOpt") or []),
                    f"SecurityOpt={host.get('SecurityOpt')}",
                ),
            ),
        )
    return checks


def score(inspect: dict[str, Any], info: dict[str, Any], processes: list[str]) -> list[Result]:
    """Every scored recommendation of section 5 for one container, in the benchmark's order."""
    return [
        Result(item, title, *check()) for item, title, check in _checks(inspect, info, processes)
    ]


def summary(results: list[Result]) -> str:
    passed = sum(r.passed for r in results)
    return f"{passed}/{len(results)}"
