"""Zun's configuration: the groups and option names of OpenStack Zun, on oslo.config.

Importing this package registers every option on the global ``CONF``, so any
module can read ``zun.conf.CONF.<group>.<option>`` once the command has called
:func:`parse_args`. Library options keep their owners: oslo.db's [database],
oslo.messaging's transport_url, keystonemiddleware's [keystone_authtoken],
oslo.log's logging options (registered here so that --debug and
[DEFAULT]/debug work in every command).
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata

import oslo_messaging
from oslo_config import cfg
from oslo_log import log
from oslo_middleware import cors
from oslo_middleware.healthcheck import opts as healthcheck_opts

from zun.conf import (
    api,
    availability_zone,
    cinder_client,
    cni_daemon,
    compute,
    container_driver,
    database,
    docker,
    glance_client,
    image_driver,
    keystone,
    netconf,
    network,
    neutron,
    neutron_client,
    paths,
    pci,
    placement_client,
    profiler,
    quota,
    scheduler,
    services,
    ssl,
    utils,
    volume,
    websocket_proxy,
    zun_client,
)

CONF = cfg.CONF

# Order matters only for the generated sample: [DEFAULT] modules first.
OPTION_MODULES = (
    netconf,
    paths,
    availability_zone,
    container_driver,
    image_driver,
    services,
    utils,
    api,
    compute,
    scheduler,
    quota,
    websocket_proxy,
    docker,
    network,
    neutron,
    volume,
    cni_daemon,
    database,
    keystone,
    neutron_client,
    cinder_client,
    glance_client,
    placement_client,
    zun_client,
    pci,
    ssl,
    profiler,
)

# Zun's RPC exchange; without this oslo.messaging would use "openstack" and
# never meet an existing Zun deployment's queues.
CONTROL_EXCHANGE = "zun"

# The headers python-zunclient and browsers exchange with the API.
CORS_DEFAULTS = {
    "allow_headers": [
        "X-Auth-Token",
        "X-Identity-Status",
        "X-Roles",
        "X-Service-Catalog",
        "X-User-Id",
        "X-Project-Id",
        "X-OpenStack-Request-ID",
        "X-Server-Management-Url",
        "OpenStack-API-Version",
    ],
    "expose_headers": [
        "X-Auth-Token",
        "X-Subject-Token",
        "X-Service-Token",
        "X-OpenStack-Request-ID",
        "X-Server-Management-Url",
        "OpenStack-API-Version",
    ],
    "allow_methods": ["GET", "PUT", "POST", "DELETE", "PATCH"],
}


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register every option zun reads on `conf` (idempotent before parsing)."""
    for module in OPTION_MODULES:
        module.register_opts(conf)
    log.register_options(conf)


def _version() -> str:
    try:
        return metadata.version("zun")
    except metadata.PackageNotFoundError:
        return "unknown"


def parse_args(
    argv: Sequence[str],
    default_config_files: list[str] | None = None,
    conf: cfg.ConfigOpts = CONF,
) -> cfg.ConfigOpts:
    """Parse a command line (``argv[0]`` is the program) and the config files.

    With `default_config_files` None, oslo.config looks for zun.conf in its usual
    places (~/.zun/, ~/, /etc/zun/, /etc/); pass [] to read none unless
    --config-file is given.
    """
    prog = argv[0].rsplit("/", 1)[-1] if argv else None
    conf(
        list(argv[1:]),
        project="zun",
        prog=prog,
        version=_version(),
        default_config_files=default_config_files,
    )
    return conf


oslo_messaging.set_transport_defaults(control_exchange=CONTROL_EXCHANGE)
cors.set_defaults(**CORS_DEFAULTS)
# oslo.middleware's /healthcheck options, registered up front so a config file or a test can set
# them; the defaults are the original's api-paste.ini: creating the file answers 503.
# Set on the options themselves (as cors.set_defaults does), so they hold for every ConfigOpts.
cfg.set_defaults(healthcheck_opts.HEALTHCHECK_OPTS, backends=["disable_by_file"])
cfg.set_defaults(
    healthcheck_opts.DISABLE_BY_FILE_OPTS, disable_by_file_path="/etc/zun/healthcheck_disable"
)
CONF.register_opts(
    healthcheck_opts.HEALTHCHECK_OPTS + healthcheck_opts.DISABLE_BY_FILE_OPTS, group="healthcheck"
)
register_opts(CONF)

__all__ = ["CONF", "parse_args", "register_opts"]
