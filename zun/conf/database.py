"""[database]: oslo.db's options, plus Zun's own mysql_engine.

The connection and pool options belong to oslo.db and are registered by it; we
only drop its SQLite default so that an unset connection is visible as None and
each deployment mode chooses its own.
"""

from oslo_config import cfg
from oslo_db import options as db_options

GROUP = cfg.OptGroup("database", title="Database")

OPTS = [
    cfg.StrOpt(
        "mysql_engine",
        default="InnoDB",
        help="Storage engine of the tables created on MySQL or MariaDB.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    db_options.set_defaults(conf, connection=None)
    conf.register_opts(OPTS, group=GROUP.name)


def list_opts() -> dict[str, list[cfg.Opt]]:
    # Zun's generator listed mysql_engine under [DEFAULT], where setting it has no
    # effect; list it where it is read.
    return {GROUP.name: OPTS}
