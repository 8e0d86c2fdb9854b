"""[neutron_client]: how to reach Neutron."""

from oslo_config import cfg

from zun.conf import _client, _group

GROUP = cfg.OptGroup(
    "neutron_client", title="Neutron client", help="Endpoint and TLS settings for Neutron."
)

OPTS = _client.endpoint_opts("Neutron")


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
