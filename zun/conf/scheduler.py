"""[scheduler]: host selection, which runs inside zun-api."""

from oslo_config import cfg

from zun.conf import _group

GROUP = cfg.OptGroup(
    "scheduler", title="Scheduler", help="How zun-api picks a compute node for a container."
)

OPTS = [
    cfg.StrOpt(
        "driver",
        default="filter_scheduler",
        choices=[
            ("chance_scheduler", "a random node among those that are up"),
            ("fake_scheduler", "for tests only"),
            ("filter_scheduler", "the nodes that pass every enabled filter"),
        ],
        help="Scheduler driver.",
    ),
    cfg.MultiStrOpt(
        "available_filters",
        default=["zun.scheduler.filters.all_filters"],
        help="Filter classes the scheduler may load, as dotted paths; the path of a "
        "function returning classes loads them all. Repeat the option for several "
        "entries. enabled_filters chooses among these.",
    ),
    cfg.ListOpt(
        "enabled_filters",
        default=["AvailabilityZoneFilter", "ComputeFilter", "RuntimeFilter"],
        help="Names of the filters applied, in this order, to the candidate nodes.",
    ),
    # Not in Zun: added by the rewrite.
    cfg.StrOpt(
        "weigher",
        default="spread",
        choices=[
            (
                "spread",
                "the node with the least allocated share of CPU and memory first; "
                "among equals, the one with the fewest containers of the same project, then "
                "the fewest containers",
            ),
            (
                "binpack",
                "the node with the most allocated share first, then the most "
                "containers: fills a node before using the next",
            ),
        ],
        help="[Added by the rewrite, not in Zun] How filter_scheduler orders the nodes that "
        "pass the filters; the first whose claim succeeds gets the container. Zun has no "
        "weigher and takes the first node that fits, which packs.",
    ),
    # Not in Zun: added by the rewrite (Zun always schedules through Placement).
    cfg.BoolOpt(
        "use_placement",
        default=False,
        help="[Added by the rewrite, not in Zun] Schedule through Placement: every "
        "zun-compute reports its resource provider (VCPU, MEMORY_MB, DISK_GB with its own "
        "allocation ratios and reserves) and reconciles its allocations; zun-api asks "
        "Placement for allocation candidates and claims each container's allocation there "
        "(consumer = the container's UUID) as well as in the database. Set it in the "
        "configuration of zun-api and of every zun-compute. Off: the built-in atomic "
        "claims alone (Zun always uses Placement).",
    ),
    cfg.IntOpt(
        "max_placement_results",
        default=1000,
        min=1,
        help="Most allocation candidates asked of Placement for one scheduling request.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
