"""Microversion negotiation: the ``OpenStack-API-Version: container X.Y`` header.

A request without the header runs at the minimum (1.1), as in the original; ``latest`` is the
maximum. Out-of-range and malformed values are refused with 406 (the original crashed into a 500
for out-of-range values).
"""

from __future__ import annotations

from typing import NamedTuple

SERVICE_TYPE = "container"
HEADER = "OpenStack-API-Version"
MIN_HEADER = "OpenStack-API-Minimum-Version"
MAX_HEADER = "OpenStack-API-Maximum-Version"

# One line per microversion, so the history is readable where the range is defined.
HISTORY = (
    ("1.1", "Initial version"),
    ("1.2", "User-specified pre-created networks (nets)"),
    ("1.3", "auto_remove on create"),
    ("1.4", "Hosts API"),
    ("1.5", "runtime on create"),
    ("1.6", "network_detach"),
    ("1.7", "force delete only for admins"),
    ("1.8", "network_attach"),
    ("1.9", "hostname on create"),
    ("1.10", "asynchronous delete (204)"),
    ("1.11", "mounts on create"),
    ("1.12", "stop before delete"),
    ("1.13", "network_list"),
    ("1.14", "rename through PATCH (rename action removed)"),
    ("1.15", "add/remove_security_group removed"),
    ("1.16", "capsule restart policy moved into spec"),
    ("1.17", "network_detach by port"),
    ("1.18", "network_list response format"),
    ("1.19", "resize_container"),
    ("1.20", "command is a list"),
    ("1.21", "privileged on create"),
    ("1.22", "healthcheck on create"),
    ("1.23", "mounts[].type"),
    ("1.24", "exposed_ports on create"),
    ("1.25", "base64 archive data"),
    ("1.26", "quotas"),
    ("1.27", "network delete"),
    ("1.28", "cpu_policy"),
    ("1.29", "enable_cpu_pinning in the host view"),
    ("1.30", "registries API"),
    ("1.31", "registry on create"),
    ("1.32", "asynchronous capsule delete"),
    ("1.33", "finish_time in container actions"),
    ("1.34", "capsule initContainers"),
    ("1.35", "capsule container ports"),
    ("1.36", "container tty"),
    ("1.37", "capsule tty and stdin"),
    ("1.38", "capsule annotations"),
    ("1.39", "container host"),
    ("1.40", "container entrypoint"),
    # Not in Zun: added by the rewrite.
    ("1.41", "evacuate and purge a down host (POST /v1/hosts/{host}/evacuate, /purge)"),
)


class Version(NamedTuple):
    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @classmethod
    def parse(cls, text: str) -> Version:
        major, minor = text.split(".")
        return cls(int(major), int(minor))


MIN_VERSION = Version.parse(HISTORY[0][0])
MAX_VERSION = Version.parse(HISTORY[-1][0])

_RANGE = f"[{SERVICE_TYPE} {MIN_VERSION}, {SERVICE_TYPE} {MAX_VERSION}]"


class VersionError(Exception):
    """A malformed or unsupported version header; always answered with 406."""

    def __init__(self, detail: str, unsupported: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.unsupported = unsupported


def parse_header(value: str | None) -> Version:
    """The effective version of a request, from its header value (None when absent).

    The order of the checks is the original's: two tokens, then ``latest`` (whatever the service
    type), then the service type, then ``<int>.<int>`` (``int()`` semantics, so ``01.5`` and
    ``1.+5`` are 1.5), then the range.
    """
    if value is None:
        return MIN_VERSION
    tokens = value.split()
    if len(tokens) != 2:
        raise VersionError("Invalid service type for OpenStack-API-Version header")
    service, number = tokens
    if number.lower() == "latest":
        return MAX_VERSION
    if service != SERVICE_TYPE:
        raise VersionError("Invalid service type for OpenStack-API-Version header")
    parts = number.split(".")
    try:
        if len(parts) != 2:
            raise ValueError(number)
        version = Version(int(parts[0]), int(parts[1]))
    except ValueError:
        raise VersionError("Invalid value for OpenStack-API-Version header") from None
    if not MIN_VERSION <= version <= MAX_VERSION:
        if version.major != MIN_VERSION.major:
            detail = (
                f"Mutually exclusive versions requested. Version {version} requested but "
                f"not supported by this service. The supported version range is: "
                f"{_RANGE}."
            )
        else:
            detail = (
                f"Version {version} was requested but the minor version is not "
                f"supported by this service. The supported version range is: {_RANGE}."
            )
        raise VersionError(detail, unsupported=True)
    return version


def response_headers(version: Version) -> list[tuple[str, str]]:
    return [
        (MIN_HEADER, f"{SERVICE_TYPE} {MIN_VERSION}"),
        (MAX_HEADER, f"{SERVICE_TYPE} {MAX_VERSION}"),
        (HEADER, f"{SERVICE_TYPE} {version}"),
        ("Vary", HEADER),
    ]
