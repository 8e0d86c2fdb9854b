"""[DEFAULT] filesystem locations."""

import os

from oslo_config import cfg

_PACKAGE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))

OPTS = [
    cfg.StrOpt(
        "pybasedir",
        default=_PACKAGE_DIR,
        sample_default="<zun package directory>",
        help="Directory where the zun Python package is installed.",
    ),
    cfg.StrOpt(
        "bindir",
        default="$pybasedir/bin",
        help="Directory where the zun commands are installed.",
    ),
    cfg.StrOpt(
        "state_path",
        # Zun defaults this to $pybasedir, i.e. inside the installed package;
        # a package directory is no place for mutable state.
        default="/var/lib/zun",
        help="Top directory for the state zun keeps on disk (Glance image cache, "
        "volume mount points, ...). [Default changed by the rewrite: Zun used "
        "$pybasedir; the embedded mode overrides it with a per-user directory.]",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {"DEFAULT": OPTS}
