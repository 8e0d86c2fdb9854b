"""[cinder_client]: how to reach Cinder."""

from oslo_config import cfg

from zun.conf import _client, _group

GROUP = cfg.OptGroup(
    "cinder_client", title="Cinder client", help="Endpoint and TLS settings for Cinder."
)

OPTS = _client.endpoint_opts("Cinder", api_version="3", client_cert=False)


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
