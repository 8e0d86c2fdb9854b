"""[glance_client]: how to reach Glance."""

from oslo_config import cfg

from zun.conf import _client, _group

GROUP = cfg.OptGroup(
    "glance_client", title="Glance client", help="Endpoint and TLS settings for Glance."
)

OPTS = _client.endpoint_opts("Glance", api_version="2")


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
