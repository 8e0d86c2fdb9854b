"""[cni_daemon]: the zun-cni-daemon that plugs Neutron ports into capsules."""

from oslo_config import cfg

from zun.conf import _group

GROUP = cfg.OptGroup(
    "cni_daemon", title="CNI daemon", help="Options of zun-cni-daemon and its CNI plugin."
)

OPTS = [
    cfg.PortOpt("cni_daemon_port", default=9036, help="Port the CNI daemon listens on."),
    cfg.IPOpt("cni_daemon_host", default="127.0.0.1", help="Address the CNI daemon listens on."),
    cfg.IntOpt(
        "worker_num",
        default=30,
        help="Most worker processes the daemon runs for CNI requests.",
    ),
    cfg.IntOpt(
        "vif_active_timeout",
        default=60,
        help="Seconds to wait for a port to become active.",
    ),
    cfg.IntOpt(
        "pyroute2_timeout",
        default=10,
        help="Seconds a netlink operation (pyroute2) may take; raise it on hosts with "
        "many interfaces.",
    ),
    cfg.BoolOpt(
        "docker_mode",
        default=False,
        help="Set when the daemon itself runs in a container.",
    ),
    cfg.StrOpt(
        "netns_proc_dir",
        help="With docker_mode, where the host's /proc is mounted in the daemon's container.",
    ),
    cfg.DictOpt(
        "sriov_physnet_resource_mappings",
        default={},
        help="SR-IOV device plugin resource name of each physical network, as "
        "physnet:resource pairs.",
    ),
    cfg.DictOpt(
        "sriov_resource_driver_mappings",
        default={},
        help="Kernel driver of each SR-IOV resource name, as resource:driver pairs.",
    ),
    cfg.StrOpt(
        "zun_cni_config_file",
        default="/etc/cni/net.d/10-zun-cni.conf",
        help="Path of the CNI network configuration for the zun plugin.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
