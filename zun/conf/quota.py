"""[quota]: per-project limits applied by zun-api."""

from oslo_config import cfg

from zun.conf import _group

GROUP = cfg.OptGroup(
    "quota",
    title="Quotas",
    help='Default per-project limits, used while no "default" quota class is stored. '
    "-1 means unlimited.",
)

OPTS = [
    cfg.IntOpt("containers", default=40, min=-1, help="Containers a project may own."),
    cfg.IntOpt(
        "memory", default=51200, min=-1, help="Memory, in MB, a project's containers may use."
    ),
    cfg.IntOpt("cpu", default=20, min=-1, help="Virtual CPUs a project's containers may use."),
    cfg.IntOpt("disk", default=100, min=-1, help="Disk, in GB, a project's containers may use."),
    cfg.StrOpt(
        "driver",
        default="zun.common.quota.DbQuotaDriver",
        choices=[
            ("zun.common.quota.DbQuotaDriver", "limits and usage kept in the database"),
            ("zun.common.quota.NoopQuotaDriver", "no limit is ever enforced"),
        ],
        help="How quotas are checked.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
