"""[DEFAULT] identity of this host on the network."""

import socket

from oslo_config import cfg
from oslo_utils import netutils

OPTS = [
    cfg.StrOpt(
        "my_ip",
        # Finds the source address of the default route; no packet is sent.
        default=netutils.get_my_ipv4(),
        sample_default="<host_ipv4>",
        help="IP address of this host on the management network. Other options "
        "default to it through $my_ip.",
    ),
    cfg.HostAddressOpt(
        "host",
        default=socket.gethostname(),
        sample_default="<current_hostname>",
        help="Name of this node: the host of its compute service and the server name "
        "of its RPC queue. Must be unique among the nodes and stable across restarts.",
    ),
    cfg.StrOpt(
        "my_block_storage_ip",
        default="$my_ip",
        help="IP address this host uses to reach block storage (Cinder targets).",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {"DEFAULT": OPTS}
