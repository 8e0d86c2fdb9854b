"""[DEFAULT] miscellaneous options: privilege helper and secret encryption."""

from oslo_config import cfg

OPTS = [
    cfg.StrOpt(
        "rootwrap_config",
        default="/etc/zun/rootwrap.conf",
        help="rootwrap configuration used when a command must run as root.",
    ),
    cfg.StrOpt(
        "auth_encryption_key",
        secret=True,
        default="notgood but just long enough i t",
        help="Key from which the Fernet key that encrypts secrets stored in the "
        "database (registry passwords) is derived. The default is public: set your "
        "own, and keep it the same on every node.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {"DEFAULT": OPTS}
