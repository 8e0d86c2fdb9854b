"""[api]: the REST API server (zun-api, and the API half of zun-all)."""

from oslo_config import cfg

from zun.conf import _group

GROUP = cfg.OptGroup("api", title="REST API", help="Where and how the Containers REST API listens.")

OPTS = [
    cfg.PortOpt("port", default=9517, help="TCP port the API server listens on."),
    cfg.IPOpt(
        "host_ip",
        default="$my_ip",
        help="Address the API server binds to. Defaults to [DEFAULT]/my_ip; "
        "set 0.0.0.0 to listen on every interface.",
    ),
    cfg.BoolOpt(
        "enable_ssl_api",
        default=False,
        help="Serve the API over HTTPS directly, using the certificate and key of the "
        "[ssl] group, instead of plain HTTP behind a TLS-terminating proxy.",
    ),
    cfg.IntOpt(
        "workers",
        help="How many API worker processes to start. When unset, one per CPU.",
    ),
    cfg.IntOpt(
        "max_limit",
        default=1000,
        help="Largest page a collection request may return; also the page size used "
        "when the request gives no limit.",
    ),
    cfg.StrOpt(
        "api_paste_config",
        default="api-paste.ini",
        help="Paste deploy file describing the WSGI pipeline, looked up next to the "
        "configuration files when relative.",
    ),
    cfg.BoolOpt(
        "enable_image_validation",
        default=False,
        help="When true, a create request first asks the chosen compute node whether "
        "the image can be found, and fails early if not.",
    ),
    # Not in Zun: added by the rewrite.
    cfg.StrOpt(
        "auth_strategy",
        default="keystone",
        choices=[
            ("keystone", "validate tokens with keystonemiddleware ([keystone_authtoken])"),
            (
                "noauth",
                "no token check; identity comes from request headers or a "
                "default admin project (the embedded mode)",
            ),
        ],
        help="[Added by the rewrite, not in Zun] How the API authenticates requests.",
    ),
    # Bounds on client input, so that no request can exhaust a worker or the stack.
    cfg.IntOpt(
        "max_json_depth",
        default=32,
        min=4,
        max=256,
        help="[Added by the rewrite, not in Zun] Deepest nesting of objects and arrays "
        "accepted in a JSON request body or capsule template string (the deepest a Zun "
        "client sends is 7, in a capsule template). Deeper is a 400.",
    ),
    cfg.IntOpt(
        "max_exec_command_length",
        default=65536,
        min=1,
        help="[Added by the rewrite, not in Zun] Longest command (characters) accepted by "
        "execute; a longer one is a 400. Linux limits one argument to 128 KiB anyway.",
    ),
    cfg.IntOpt(
        "max_archive_path_length",
        default=4096,
        min=1,
        max=4096,
        help="[Added by the rewrite, not in Zun] Longest path (characters) accepted by "
        "get_archive and put_archive (Linux's PATH_MAX is 4096); each component must also "
        "fit NAME_MAX (255 bytes). Longer is a 400.",
    ),
    # Commits: which names a member may write, and how many.
    cfg.StrOpt(
        "commit_repository_prefix",
        default="",
        help="[Added by the rewrite, not in Zun] A member commits a container only into "
        "repositories starting with <prefix><project_id>/ (e.g. a prefix "
        "registry.example.com/zun- gives registry.example.com/zun-<project_id>/name). "
        "Admins may commit elsewhere; nobody commits onto a name the node already has.",
    ),
    cfg.IntOpt(
        "max_committed_images",
        default=20,
        min=-1,
        help="[Added by the rewrite, not in Zun] Most committed images a project keeps "
        "(image rows in its namespace); one more commit is a 403 over-quota. -1: no bound.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
