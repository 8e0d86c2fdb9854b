"""[DEFAULT] availability zone options."""

from oslo_config import cfg

OPTS = [
    cfg.StrOpt(
        "default_availability_zone",
        default="nova",
        help="Zone reported for a compute service that was given none; the services "
        "list shows this name instead of null.",
    ),
    cfg.StrOpt(
        "default_schedule_zone",
        help="Zone the scheduler restricts a new container to when the request names "
        "none. Unset means any zone.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {"DEFAULT": OPTS}
