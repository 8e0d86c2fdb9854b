"""[DEFAULT] timings of the services and their periodic tasks."""

from oslo_config import cfg

OPTS = [
    cfg.IntOpt(
        "periodic_interval_max",
        default=60,
        help="Longest pause, in seconds, between two runs of the periodic tasks of a service.",
    ),
    cfg.IntOpt(
        "service_down_time",
        default=180,
        help="Seconds since its last heartbeat after which a service is reported down "
        "and its host is no longer used.",
    ),
    cfg.IntOpt(
        "sync_container_state_interval",
        default=60,
        help="Seconds between two reconciliations of the containers recorded in the "
        "database with those the engine reports.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {"DEFAULT": OPTS}
