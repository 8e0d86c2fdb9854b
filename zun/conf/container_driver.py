"""[DEFAULT] options of the container driver and of container resource sizes.

The minimum_*/maximum_* bounds feed the JSON schemas of the API; they are read
when the schemas are built, so changing them needs a restart of the API.
"""

from oslo_config import cfg

OPTS = [
    cfg.StrOpt(
        "container_driver",
        default="docker",
        help="Engine driver that runs containers on a compute node.",
    ),
    cfg.StrOpt(
        "capsule_driver",
        default="cri",
        help="Engine driver that runs capsules (pods of containers) on a compute node.",
    ),
    cfg.IntOpt(
        "default_sleep_time",
        default=1,
        help="Seconds to pause between two polls while waiting for an event.",
    ),
    cfg.IntOpt(
        "default_timeout",
        default=600,
        help="Seconds after which waiting for an event gives up.",
    ),
    cfg.StrOpt(
        "floating_cpu_set",
        default="",
        help='Host CPUs (cpuset syntax, e.g. "0-1,4") never handed out to containers '
        "that ask for dedicated CPUs.",
    ),
    cfg.StrOpt(
        "container_runtime",
        default="runc",
        help="OCI runtime asked of Docker when the request names none.",
    ),
    cfg.IntOpt(
        "default_memory_swap",
        default=-1,
        help="Swap, in MB, given to a container on top of its memory; -1 means no swap limit.",
    ),
    cfg.IntOpt(
        "minimum_memory",
        default=4,
        help="Smallest memory, in MB, a create request may ask for.",
    ),
    cfg.IntOpt(
        "maximum_memory",
        default=8192,
        help="Largest memory, in MB, a create request may ask for.",
    ),
    cfg.FloatOpt(
        "minimum_cpus",
        default=0.1,
        help="Smallest number of virtual CPUs a create request may ask for.",
    ),
    cfg.FloatOpt(
        "maximum_cpus",
        default=16.0,
        help="Largest number of virtual CPUs a create request may ask for.",
    ),
    cfg.IntOpt(
        "minimum_disk",
        default=1,
        help="Smallest root disk, in GB, a create request may ask for.",
    ),
    cfg.IntOpt(
        "maximum_disk",
        default=160,
        help="Largest root disk, in GB, a create request may ask for.",
    ),
    cfg.IntOpt(
        "default_memory",
        default=512,
        help="Memory, in MB, given to a container whose request names none.",
    ),
    cfg.FloatOpt(
        "default_cpu",
        default=1.0,
        help="Virtual CPUs given to a container whose request names none.",
    ),
    cfg.IntOpt(
        "default_disk",
        default=10,
        help="Root disk, in GB, given to a container whose request names none "
        "(only where the storage driver supports a size).",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {"DEFAULT": OPTS}
