"""[zun_client]: how to reach Zun (this service, as a client of itself)."""

from oslo_config import cfg

from zun.conf import _client, _group

GROUP = cfg.OptGroup(
    "zun_client",
    title="Zun client",
    help="Endpoint and TLS settings for Zun (this service, as a client of itself).",
)

OPTS = _client.endpoint_opts("Zun")


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
