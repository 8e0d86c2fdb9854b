"""[websocket_proxy]: the console proxy for interactive exec and attach."""

from oslo_config import cfg

from zun.conf import _group

GROUP = cfg.OptGroup(
    "websocket_proxy",
    title="Console proxy",
    help="zun-wsproxy, which relays interactive exec and attach sessions.",
)

OPTS = [
    cfg.URIOpt(
        "base_url",
        default="ws://$wsproxy_host:$wsproxy_port/",
        help="URL clients use to reach the console proxy. The API builds the attach "
        "and exec URLs it returns from it, so it must be reachable by end users.",
    ),
    cfg.StrOpt(
        "wsproxy_host",
        default="$my_ip",
        help="Address the console proxy listens on.",
    ),
    cfg.PortOpt(
        "wsproxy_port",
        default=6784,
        help="Port the console proxy listens on.",
    ),
    cfg.ListOpt(
        "allowed_origins",
        default=[],
        help="Extra Origin host names accepted from browsers, besides the proxy's own.",
    ),
    cfg.BoolOpt("ssl_only", help="Refuse connections that are not encrypted."),
    cfg.StrOpt("cert", default="", help="SSL certificate file of the proxy."),
    cfg.StrOpt("key", default="", help="SSL private key file, when not included in cert."),
    # Not in Zun: added by the rewrite.
    cfg.IntOpt(
        "token_ttl",
        default=120,
        min=1,
        help="[Added by the rewrite, not in Zun] Seconds a console token stays valid "
        "after the API hands it out. A token is also spent by its first use.",
    ),
    cfg.StrOpt(
        "relay_host",
        default="",
        help="[Added by the rewrite, not in Zun] Address the console relay of zun-compute "
        "binds to and advertises to the proxy (empty: $my_ip). The proxy reaches a "
        "container on another node through this relay, never through a Docker TCP port.",
    ),
    cfg.PortOpt(
        "relay_port",
        default=0,
        help="[Added by the rewrite, not in Zun] Port of the console relay (0: any free "
        "port, told to the proxy over RPC).",
    ),
    cfg.StrOpt(
        "relay_cert",
        default="",
        help="[Added by the rewrite, not in Zun] Certificate of the console relay; when set "
        "the relay speaks TLS.",
    ),
    cfg.StrOpt(
        "relay_key",
        default="",
        help="[Added by the rewrite, not in Zun] Private key of the relay's certificate, "
        "when not in relay_cert.",
    ),
    cfg.StrOpt(
        "relay_ca_file",
        default="",
        help="[Added by the rewrite, not in Zun] CA bundle the proxy checks a TLS relay's "
        "certificate against (empty: the system's).",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
