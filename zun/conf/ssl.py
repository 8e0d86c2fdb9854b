"""[ssl]: TLS of the API server when [api]/enable_ssl_api is set.

These are the names and defaults of oslo.service's sslutils options, defined
here because that module is deprecated for removal. Do not also call
oslo_service.sslutils.register_opts on zun's CONF: the definitions differ.
"""

from oslo_config import cfg

from zun.conf import _group

GROUP = cfg.OptGroup("ssl", title="TLS", help="Certificate of the API when it serves HTTPS.")

OPTS = [
    cfg.StrOpt(
        "ca_file",
        deprecated_group="DEFAULT",
        help="CA bundle used to verify client certificates; unset means clients are "
        "not asked for one.",
    ),
    cfg.StrOpt(
        "cert_file",
        deprecated_group="DEFAULT",
        help="Certificate (PEM) the server presents.",
    ),
    cfg.StrOpt(
        "key_file",
        deprecated_group="DEFAULT",
        help="Private key (PEM) of cert_file.",
    ),
    cfg.StrOpt(
        "version",
        help="TLS protocol version to allow, e.g. TLSv1_2; unset lets Python choose.",
    ),
    cfg.StrOpt(
        "ciphers",
        help="Allowed ciphers, in OpenSSL cipher list format.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
