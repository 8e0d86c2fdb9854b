"""[neutron]: host-side settings of Neutron ports."""

from oslo_config import cfg

from zun.conf import _group

GROUP = cfg.OptGroup("neutron", title="Neutron ports")

OPTS = [
    cfg.StrOpt(
        "ovs_bridge",
        default="br-int",
        help="Open vSwitch integration bridge that container ports are plugged into.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
