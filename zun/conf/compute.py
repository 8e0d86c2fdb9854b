"""[compute]: the compute node agent and how its resources are counted."""

from oslo_config import cfg

from zun.conf import _group

GROUP = cfg.OptGroup(
    "compute", title="Compute", help="Options of zun-compute and of its resource tracking."
)

_RATIO_NOTE = (
    " When unset, the value already recorded for this node is kept, or the "
    "matching initial_* ratio is used for a new node."
)

OPTS = [
    cfg.StrOpt(
        "topic",
        default="zun-compute",
        help="RPC topic the compute agents listen on. Must match on API and compute.",
    ),
    cfg.StrOpt(
        "unique_container_name_scope",
        default="",
        choices=[
            ("", "names need not be unique"),
            ("project", "a name is unique within its project (case-insensitive)"),
            ("global", "a name is unique across all projects (case-insensitive)"),
        ],
        help="Where container names must be unique; a duplicate gets 409.",
    ),
    cfg.BoolOpt(
        "resume_container_state",
        default=False,
        help="On start-up, start again the containers that were running before the host went down.",
    ),
    cfg.BoolOpt(
        "remount_container_volume",
        default=True,
        help="On start-up, mount again the volumes of this node's containers.",
    ),
    cfg.FloatOpt(
        "reserve_disk_for_image",
        default=0.2,
        help="Share of the engine's disk kept for images and not offered to "
        "containers (0.2 keeps a fifth).",
    ),
    cfg.BoolOpt(
        "enable_cpu_pinning",
        default=False,
        help="Allow containers with a dedicated cpu_policy to be pinned to host CPUs.",
    ),
    cfg.IntOpt(
        "resource_provider_association_refresh",
        default=300,
        min=0,
        help="Seconds between two refreshes of the cached inventories, aggregates and "
        "traits of this node's resource provider in Placement; 0 never refreshes.",
    ),
    cfg.BoolOpt(
        "host_shared_with_nova",
        default=False,
        help="Whether Nova also runs on this node, so that both share one resource "
        "provider in Placement.",
    ),
    cfg.IntOpt(
        "reserved_host_disk_mb",
        default=0,
        min=0,
        help="Disk, in MB, never offered to containers.",
    ),
    cfg.IntOpt(
        "reserved_host_memory_mb",
        default=512,
        min=0,
        help="Memory, in MB, kept for the host's own processes.",
    ),
    cfg.IntOpt(
        "reserved_host_cpus",
        default=0,
        min=0,
        help="Host CPUs never offered to containers.",
    ),
    cfg.FloatOpt(
        "cpu_allocation_ratio",
        min=0.0,
        help="How many virtual CPUs may be sold per physical CPU." + _RATIO_NOTE,
    ),
    cfg.FloatOpt(
        "ram_allocation_ratio",
        min=0.0,
        help="How much memory may be sold per byte of physical memory." + _RATIO_NOTE,
    ),
    cfg.FloatOpt(
        "disk_allocation_ratio",
        min=0.0,
        help="How much disk may be sold per byte of physical disk." + _RATIO_NOTE,
    ),
    cfg.FloatOpt(
        "initial_cpu_allocation_ratio",
        default=16.0,
        min=0.0,
        help="CPU allocation ratio of a new node when cpu_allocation_ratio is unset.",
    ),
    cfg.FloatOpt(
        "initial_ram_allocation_ratio",
        default=1.5,
        min=0.0,
        help="Memory allocation ratio of a new node when ram_allocation_ratio is unset.",
    ),
    cfg.FloatOpt(
        "initial_disk_allocation_ratio",
        default=1.0,
        min=0.0,
        help="Disk allocation ratio of a new node when disk_allocation_ratio is unset.",
    ),
    # Not in Zun: added by the rewrite.
    cfg.IntOpt(
        "reap_grace_period",
        default=600,
        min=0,
        help="[Added by the rewrite, not in Zun] Seconds an engine container that "
        "carries zun's labels but has no database row is left alone before the "
        "compute agent removes it. The delay covers a create whose row is not yet "
        "visible; 0 removes such orphans at once.",
    ),
    cfg.IntOpt(
        "max_create_attempts",
        default=3,
        min=1,
        help="[Added by the rewrite, not in Zun] Hosts a create is tried on before it ends "
        "in Error, when it fails for a reason of the node (its agent died before the work "
        "was done, its container engine failed or did not answer). 1 never moves a create.",
    ),
    cfg.FloatOpt(
        "engine_probe_timeout",
        default=3.0,
        min=0.1,
        help="[Added by the rewrite, not in Zun] Seconds the heartbeat waits for the "
        "container engine's answer. An engine that does not answer makes the node "
        "unschedulable: its service is disabled with a reason starting with 'AUTO:', and "
        "enabled again by the heartbeat once the engine answers.",
    ),
    cfg.IntOpt(
        "node_monitor_interval",
        default=5,
        min=1,
        help="[Added by the rewrite, not in Zun] Seconds between two passes of the API's "
        "node monitor, which moves creates stuck on a down host to another host and "
        "evacuates auto_heal containers (see evacuate_auto_heal_after).",
    ),
    cfg.IntOpt(
        "evacuate_auto_heal_after",
        default=0,
        min=0,
        help="[Added by the rewrite, not in Zun] Seconds a host must have been down before "
        "the node monitor recreates its auto_heal containers on other hosts, as an "
        "evacuation would. 0 (the default) never evacuates automatically.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
