"""[DEFAULT] timings of the services and their periodic tasks."""

from oslo_config import cfg

OPTS = [
    cfg.IntOpt(
        "periodic_interval_max",
        default=60,
        help="Longest pause, in seconds, between two runs of the periodic tasks of a service.",
    ),
    cfg.IntOpt(
        "report_interval",
        default=5,
        min=1,
        help="[Added by the rewrite, not in Zun] Seconds between two heartbeats of a "
        "zun-compute agent (each also checks that the node's container engine answers). "
        "Zun beat every periodic_interval_max seconds at most (60).",
    ),
    cfg.IntOpt(
        "service_down_time",
        default=25,
        help="Seconds since its last heartbeat after which a service is reported down, "
        "its host is no longer used and its containers read Unknown. With report_interval "
        "5 a dead agent is seen down 20 to 25 seconds after it died. Zun's default was 180 "
        "(down 120 to 180 seconds after the death, with its 60 s heartbeat).",
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
