"""Shared shape of the [<service>_client] groups: how to reach another OpenStack service."""

from oslo_config import cfg


def endpoint_opts(
    service: str, *, api_version: str | None = None, client_cert: bool = True
) -> list[cfg.Opt]:
    """Options to find and trust the endpoint of `service` in the Keystone catalog."""
    opts: list[cfg.Opt] = [
        cfg.StrOpt(
            "region_name",
            help=f"Region of the {service} endpoint in the service catalog.",
        ),
        cfg.StrOpt(
            "endpoint_type",
            default="publicURL",
            help=f"Interface of the {service} endpoint taken from the catalog "
            "(publicURL, internalURL or adminURL).",
        ),
    ]
    if api_version is not None:
        opts.append(
            cfg.StrOpt(
                "api_version",
                default=api_version,
                help=f"Major version of the {service} API to use.",
            )
        )
    opts.append(cfg.StrOpt("ca_file", help=f"CA bundle that signs the {service} certificate."))
    if client_cert:
        opts += [
            cfg.StrOpt(
                "cert_file",
                help=f"Client certificate (PEM chain) presented to {service}.",
            ),
            cfg.StrOpt("key_file", help="Private key of cert_file (PEM)."),
        ]
    opts.append(
        cfg.BoolOpt(
            "insecure",
            default=False,
            help=f"Skip verification of the {service} TLS certificate.",
        )
    )
    return opts
