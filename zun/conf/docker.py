"""[docker]: how zun-compute reaches Docker, and the hardening it applies."""

from oslo_config import cfg, types

from zun.conf import _group

GROUP = cfg.OptGroup(
    "docker", title="Docker", help="Connection to the Docker engine and container defaults."
)

# Capabilities Docker grants by default that ordinary workloads do not need, yet
# widen what a compromised container can do: NET_RAW forges packets (ARP/DNS
# spoofing on the bridge; ping still works through Docker's ping_group_range
# sysctl), MKNOD creates device nodes, AUDIT_WRITE writes to the kernel audit
# log. SYS_ADMIN and the like are already outside Docker's default set.
DEFAULT_CAP_DROP = ["NET_RAW", "MKNOD", "AUDIT_WRITE"]

_CAPABILITY = types.String(regex=r"^[A-Za-z_]+$", type_name="capability name")

OPTS = [
    cfg.StrOpt(
        "docker_remote_api_version",
        default="1.40",
        help="Docker Engine API version requested by the client. Lower it for an older engine.",
    ),
    cfg.IntOpt(
        "default_timeout",
        default=60,
        help="Seconds a call to the Docker API may take before it fails.",
    ),
    cfg.StrOpt(
        "api_url",
        default="unix:///var/run/docker.sock",
        help="Endpoint of the Docker engine: a unix socket, or tcp://host:port with "
        "the TLS files below.",
    ),
    cfg.StrOpt(
        "docker_remote_api_url",
        default="tcp://$docker_remote_api_host:$docker_remote_api_port",
        help="Endpoint of this node's Docker engine as seen from other hosts.",
    ),
    cfg.BoolOpt(
        "api_insecure",
        default=False,
        help="Skip verification of the engine's TLS certificate.",
    ),
    cfg.StrOpt("ca_file", help="CA bundle that signs the engine's certificate (tlscacert)."),
    cfg.StrOpt("cert_file", help="Client certificate presented to the engine (tlscert)."),
    cfg.StrOpt("key_file", help="Private key of cert_file (tlskey)."),
    cfg.StrOpt(
        "docker_remote_api_host",
        default="$my_ip",
        help="Host part of docker_remote_api_url.",
    ),
    cfg.StrOpt(
        "docker_remote_api_port",
        default="2375",
        help="Port part of docker_remote_api_url.",
    ),
    cfg.IntOpt(
        "execute_timeout",
        default=5,
        help="Seconds a non-interactive exec may run before its output is returned.",
    ),
    cfg.StrOpt(
        "docker_data_root",
        default="/var/lib/docker",
        help="Data root of the Docker engine (its --data-root).",
    ),
    cfg.StrOpt(
        "default_registry",
        help="Registry prepended to image names that carry no registry host, e.g. "
        "registry.example.com:5000.",
    ),
    cfg.StrOpt(
        "default_registry_username",
        help="User name for default_registry.",
    ),
    cfg.StrOpt(
        "default_registry_password",
        secret=True,
        help="Password for default_registry.",
    ),
    # Not in Zun: hardening added by the rewrite.
    cfg.BoolOpt(
        "security_opt_no_new_privileges",
        default=True,
        help="[Added by the rewrite, not in Zun] Start containers with "
        "no-new-privileges, so setuid binaries and file capabilities cannot raise "
        "the privileges of a process inside.",
    ),
    cfg.ListOpt(
        "cap_drop",
        item_type=_CAPABILITY,
        default=DEFAULT_CAP_DROP,
        help="[Added by the rewrite, not in Zun] Linux capabilities removed from every "
        "container, on top of those Docker never grants. The default drops those of "
        "Docker's default set that few workloads need and that help an attacker: "
        "NET_RAW (forging packets on the shared bridge), MKNOD (creating device "
        "nodes), AUDIT_WRITE (writing to the host's audit log). Set it empty to keep "
        "Docker's defaults.",
    ),
    cfg.IntOpt(
        "pids_limit",
        default=4096,
        min=0,
        help="[Added by the rewrite, not in Zun] Most processes and threads a "
        "container may have at once, so that a fork bomb cannot exhaust the host. "
        "0 means unlimited.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
