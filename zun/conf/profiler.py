"""[profiler]: OSProfiler tracing.

osprofiler is not a dependency; its options are defined here with its names and
defaults so that a zun.conf that sets them still loads. Nothing acts on them yet.
"""

from oslo_config import cfg

from zun.conf import _group

GROUP = cfg.OptGroup("profiler", title="Profiler", help="OSProfiler tracing (accepted, unused).")

OPTS = [
    cfg.BoolOpt(
        "enabled",
        default=False,
        deprecated_name="profiler_enabled",
        help="Trace the services of this node with OSProfiler.",
    ),
    cfg.BoolOpt("trace_sqlalchemy", default=False, help="Include SQL statements in traces."),
    cfg.BoolOpt(
        "trace_requests",
        default=False,
        help="Include outgoing HTTP calls made with requests in traces.",
    ),
    cfg.StrOpt(
        "hmac_keys",
        default="SECRET_KEY",
        secret=True,
        help="Comma-separated keys that sign trace requests; a request is traced only "
        "when signed with one of them.",
    ),
    cfg.StrOpt(
        "connection_string",
        default="messaging://",
        help="Backend that receives the trace points, e.g. messaging://, redis://host:6379.",
    ),
    cfg.StrOpt(
        "es_doc_type",
        default="notification",
        help="Document type of trace points stored in Elasticsearch.",
    ),
    cfg.StrOpt(
        "es_scroll_time",
        default="2m",
        help="How long Elasticsearch keeps a scroll context between two batches of a "
        "trace query (e.g. 2m).",
    ),
    cfg.IntOpt(
        "es_scroll_size",
        default=10000,
        help="Batch size of Elasticsearch trace queries.",
    ),
    cfg.FloatOpt(
        "socket_timeout",
        default=0.1,
        help="Seconds a Redis Sentinel connection may wait.",
    ),
    cfg.StrOpt(
        "sentinel_service_name",
        default="mymaster",
        help="Service name of the Redis master behind Sentinel.",
    ),
    cfg.BoolOpt(
        "filter_error_trace",
        default=False,
        help="Also store traces containing errors apart, for quick lookup.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, OPTS)


def list_opts() -> dict[str, list[cfg.Opt]]:
    return {GROUP.name: OPTS}
