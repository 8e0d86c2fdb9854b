"""Image driver options: [DEFAULT] driver choice and sandbox image, [glance] storage."""

from oslo_config import cfg

from zun.conf import _group

DEFAULT_OPTS = [
    cfg.ListOpt(
        "image_driver_list",
        default=["glance", "docker"],
        help="Image drivers a request may name in image_driver. The API rejects any other value.",
    ),
    cfg.StrOpt(
        "default_image_driver",
        default="docker",
        help="Image driver used when a request names none.",
    ),
    cfg.StrOpt(
        "sandbox_image",
        default="kubernetes/pause",
        help="Image of the sandbox (infra) container that holds the namespaces of a capsule.",
    ),
    cfg.StrOpt(
        "sandbox_image_driver",
        default="docker",
        help="Image driver used to fetch sandbox_image.",
    ),
    cfg.StrOpt(
        "sandbox_image_pull_policy",
        default="ifnotpresent",
        help="When to pull sandbox_image: always, ifnotpresent or never.",
    ),
    # Not in Zun: added by the rewrite.
    cfg.StrOpt(
        "sandbox_fallback_image",
        default="busybox:latest",
        help="[Added by the rewrite, not in Zun] A local image that runs a capsule's sandbox "
        "when sandbox_image is absent and sandbox_image_pull_policy forbids pulling it (an "
        "offline node). It is never pulled. Empty: no fallback, the capsule fails.",
    ),
    cfg.StrOpt(
        "sandbox_fallback_command",
        default="sh -c 'trap \"exit 0\" TERM INT; sleep 2147483647 & wait'",
        help="[Added by the rewrite, not in Zun] Command (split like a shell) the fallback "
        "sandbox runs: it must keep running until stopped.",
    ),
    cfg.IntOpt(
        "capsule_init_timeout",
        default=3600,
        min=1,
        help="[Added by the rewrite, not in Zun, which hard-coded it] Seconds a capsule's "
        "init container may run before the capsule is failed.",
    ),
]

GLANCE_GROUP = cfg.OptGroup(
    "glance", title="Glance images", help="Local handling of images that come from Glance."
)

GLANCE_OPTS = [
    cfg.StrOpt(
        "images_directory",
        default="$state_path/images",
        help="Directory where images downloaded from Glance are kept before being "
        "loaded into the engine.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(DEFAULT_OPTS)
    _group.register(conf, GLANCE_GROUP, GLANCE_OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {"DEFAULT": DEFAULT_OPTS, GLANCE_GROUP.name: GLANCE_OPTS}
