"""[pci]: PCI passthrough (SR-IOV) devices."""

from oslo_config import cfg

from zun.conf import _group

GROUP = cfg.OptGroup("pci", title="PCI passthrough")

OPTS = [
    cfg.MultiStrOpt(
        "alias",
        default=[],
        help="Names a kind of PCI device for requests, as a JSON object, e.g. "
        '{"name": "QuickAssist", "vendor_id": "8086", "product_id": "0443", '
        '"device_type": "type-PCI"}. Repeat the option for several aliases.',
    ),
    cfg.MultiStrOpt(
        "passthrough_whitelist",
        default=[],
        help="PCI devices of this host that containers may be given, as a JSON object "
        "or list matching vendor_id, product_id, address or devname, optionally with "
        "a physical_network. Repeat the option for several entries.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
