"""[volume]: volumes mounted into containers."""

from oslo_config import cfg

from zun.conf import _group

GROUP = cfg.OptGroup("volume", title="Volumes", help="Volume drivers and their settings.")

OPTS = [
    cfg.StrOpt(
        "driver",
        default="cinder",
        help="Volume driver used when a mount names none.",
    ),
    cfg.ListOpt(
        "driver_list",
        default=["cinder", "local"],
        help="Volume drivers this node can serve.",
    ),
    cfg.StrOpt(
        "volume_dir",
        default="$state_path/mnt",
        help="Directory under which volumes are mounted on the host before being bound "
        "into containers.",
    ),
    cfg.StrOpt(
        "fstype",
        default="ext4",
        help="File system created on a new, empty block volume.",
    ),
    cfg.BoolOpt(
        "use_multipath",
        default=False,
        help="Attach block volumes through multipath when the backend offers it.",
    ),
    cfg.IntOpt(
        "timeout_wait_volume_available",
        default=60,
        help="Seconds to wait for a new volume to become available.",
    ),
    cfg.IntOpt(
        "timeout_wait_volume_deleted",
        default=60,
        help="Seconds to wait for a volume to be gone after deleting it.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
