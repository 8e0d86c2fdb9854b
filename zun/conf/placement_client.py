"""[placement_client]: how to reach Placement."""

from oslo_config import cfg

from zun.conf import _client, _group

GROUP = cfg.OptGroup(
    "placement_client", title="Placement client", help="Endpoint and TLS settings for Placement."
)

OPTS = _client.endpoint_opts("Placement")


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
