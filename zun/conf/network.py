"""[network]: how containers get their networks."""

from oslo_config import cfg

from zun.conf import _group

GROUP = cfg.OptGroup("network", title="Networking", help="Which network driver zun-compute uses.")

OPTS = [
    cfg.StrOpt(
        "driver",
        default="docker",
        choices=[
            ("kuryr", "Neutron ports through the kuryr-libnetwork Docker plugin"),
            ("cni", "Neutron ports through the zun-cni plugin (capsules)"),
            (
                "docker",
                "[added by the rewrite] Docker bridge networks, no Neutron: the embedded mode",
            ),
        ],
        help='Network driver. "docker" was added by the rewrite and is the default here (the '
        'original defaulted to "kuryr", which needs Neutron and kuryr-libnetwork on every '
        'node); "cni" is accepted and not acted on.',
    ),
    cfg.StrOpt(
        "driver_name",
        default="kuryr",
        help="Name of the Docker network plugin used by the kuryr driver, as shown by "
        '"docker plugin ls".',
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
