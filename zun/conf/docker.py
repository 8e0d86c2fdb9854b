"""[docker]: how zun-compute reaches Docker, and the hardening it applies."""

from oslo_config import cfg, types

from zun.conf import _group

GROUP = cfg.OptGroup(
    "docker", title="Docker", help="Connection to the Docker engine and container defaults."
)

# Kubernetes' "restricted" Pod Security Standard: drop ALL, allow NET_BIND_SERVICE only.
DEFAULT_CAP_DROP = ["ALL"]
# What ordinary images need on top, and why (each is in Docker's own default set):
#   CHOWN            entrypoints chown their data directories to the service user
#                    (postgres, mysql, redis images)
#   DAC_OVERRIDE     root in the container reads/writes files owned by the service user
#                    (the same entrypoints, package scripts)
#   FOWNER           chmod/utime on files root does not own (postgres: chmod 700 $PGDATA)
#   KILL             a root master signals workers running as another user (nginx, apache)
#   NET_BIND_SERVICE listen on ports below 1024 (the only one "restricted" allows)
#   SETGID, SETUID   step down from root to the service user (gosu, su-exec, nginx workers)
# Dropped from Docker's default set: AUDIT_WRITE, FSETID, MKNOD, NET_RAW (forging packets
# on the shared bridge; ping keeps working through Docker's ping_group_range sysctl),
# SETFCAP, SETPCAP, SYS_CHROOT.
DEFAULT_CAP_ADD = [
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "KILL",
    "NET_BIND_SERVICE",
    "SETGID",
    "SETUID",
]

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
        "non-privileged container. The default, ALL, is Kubernetes' 'restricted' "
        "profile; cap_add then gives back what ordinary images need. Set it empty to "
        "keep Docker's default set.",
    ),
    cfg.ListOpt(
        "cap_add",
        item_type=_CAPABILITY,
        default=DEFAULT_CAP_ADD,
        help="[Added by the rewrite, not in Zun] Capabilities every non-privileged "
        "container keeps (added back after cap_drop). CHOWN, DAC_OVERRIDE and FOWNER let "
        "entrypoints prepare their data directories, KILL lets a root master signal "
        "workers of another user, NET_BIND_SERVICE binds ports below 1024, SETGID and "
        "SETUID step down from root to a service user. An admin adds more to one "
        "container with the label zun.cap_add=NAME,... (rule container:create:cap_add).",
    ),
    cfg.StrOpt(
        "publish_host_ip",
        default="$my_ip",
        help="[Added by the rewrite, not in Zun] Node address on which the exposed ports "
        "of containers are published. 0.0.0.0 publishes on every address of the node.",
    ),
    cfg.BoolOpt(
        "read_only_root_filesystem",
        default=False,
        help="[Added by the rewrite, not in Zun] Run non-privileged containers with a "
        "read-only root filesystem; /tmp and /run are then small tmpfs mounts, volumes "
        "stay writable. Images that write elsewhere in their own filesystem fail.",
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
