"""A capsule as the domain creates it: the checked plan of a template (built from the request by
``zun.api.capsule_template``), one member per (init) container, one volume per declared volume.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

_GREEK = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
    "pi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
)
_NAME_MAX = 255


@dataclass
class MemberPlan:
    """One container or init container of the capsule, as its row will hold it."""

    image: str
    init: bool
    command: list[str] | None = None
    workdir: str | None = None
    environment: dict[str, str] | None = None
    image_pull_policy: str | None = None
    interactive: bool = False
    tty: bool = False
    cpu: float | None = None
    memory: str | None = None
    exposed_ports: dict[str, Any] | None = None
    restart_policy: dict[str, str] = field(default_factory=dict)
    # (volume name, mount path, read only) of each volumeMounts entry naming a declared volume
    mounts: list[tuple[str, str, bool]] = field(default_factory=list)

    def row_values(self) -> dict[str, Any]:
        return {
            "image": self.image,
            "command": self.command,
            "workdir": self.workdir,
            "environment": self.environment,
            "image_pull_policy": self.image_pull_policy,
            "interactive": self.interactive,
            "tty": self.tty,
            "cpu": self.cpu,
            "memory": self.memory,
            "exposed_ports": self.exposed_ports,
            "restart_policy": dict(self.restart_policy),
        }


@dataclass
class VolumePlan:
    """A declared volume: a new one of ``size`` GiB, or the existing ``volume_id``."""

    name: str
    size: int | None = None
    volume_id: str | None = None
    auto_remove: bool = False


@dataclass
class CapsulePlan:
    name: str | None
    labels: dict[str, str]
    annotations: dict[str, str] | None
    restart_policy: dict[str, str]
    availability_zone: str | None
    cpu: float
    memory: str
    init_containers: list[MemberPlan]
    containers: list[MemberPlan]
    volumes: list[VolumePlan]

    @property
    def members(self) -> list[MemberPlan]:
        """Init containers first (they run first), then the containers, in template order."""
        return [*self.init_containers, *self.containers]


def member_name(capsule_ident: str) -> str:
    """``capsule-<capsule name or uuid>-<greek letter>-<1..24>``, as Zun names members."""
    suffix = f"-{random.choice(_GREEK)}-{random.randint(1, 24)}"
    return f"capsule-{capsule_ident}"[: _NAME_MAX - len(suffix)] + suffix
