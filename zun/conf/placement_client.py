"""[placement_client]: how to reach Placement."""

from oslo_config import cfg

from zun.conf import _client, _group

GROUP = cfg.OptGroup(
    "placement_client", title="Placement client", help="Endpoint and TLS settings for Placement."
)

OPTS = _client.endpoint_opts("Placement") + [
    # Not in Zun: added by the rewrite, as Nova's [placement]/endpoint_override.
    cfg.StrOpt(
        "endpoint_override",
        help="[Added by the rewrite, not in Zun] Placement's address, used instead of the "
        "one in the service catalog (the token still comes from [keystone_auth]).",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
