"""zun-all: the embedded default, API + compute agent + console proxy in one process.

SQLite under a state directory, an in-process message transport, no Keystone (identity from
headers, or a default admin), the local Docker engine. Needs no configuration file; a
``--config-file`` still works and wins over these defaults.

The state directory (database, volumes, and the lock that keeps one zun-all per directory) is
``--state-dir`` when given, else the configuration's ``[DEFAULT]/state_path`` (default
``/var/lib/zun``): two instances with their own configuration files run side by side.

zun-all runs at a lower CPU weight than Docker (``--cpu-nice``, default 10, in a session of its
own: ``zun.service.cpu_weight``). That is decided first, before anything heavy is imported, so
this module imports the rest of zun inside its functions.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from zun.service import cpu_weight

if TYPE_CHECKING:
    from zun.service import runner

LOG = logging.getLogger("zun.cmd.all")

DEFAULT_STATE_DIR = "/var/lib/zun"
DEFAULT_CPU_NICE = 10


def _parse_own_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(prog="zun-all", add_help=False)
    parser.add_argument(
        "--state-dir",
        default=None,
        help="where the database, volumes and lock live (default: "
        f"[DEFAULT]/state_path, itself {DEFAULT_STATE_DIR} by default)",
    )
    parser.add_argument("--port", type=int, default=None, help="API port (default 9517)")
    parser.add_argument(
        "--bind", default=None, help="API and console proxy address (default 127.0.0.1)"
    )
    parser.add_argument(
        "--wsproxy-port", type=int, default=None, help="console proxy port (default 6784)"
    )
    parser.add_argument(
        "--cpu-nice",
        type=int,
        default=DEFAULT_CPU_NICE,
        metavar="N",
        help="CPU weight against Docker and the containers: run in a session of its own at "
        f"nice N (default {DEFAULT_CPU_NICE}; 0 leaves the priority as started)",
    )
    own, rest = parser.parse_known_args(argv)
    if "-h" in rest or "--help" in rest:
        # oslo.config prints the configuration options next; ours come first.
        print(parser.format_help().replace("usage: zun-all", "usage: zun-all [embedded options]"))
    return own, rest


def apply_embedded_defaults() -> None:
    """Defaults of the embedded mode, set before the configuration files are read."""
    # oslo.messaging registers transport_url lazily; register it now to give it a default.
    from oslo_messaging import opts as messaging_opts

    from zun.conf import CONF

    for group, opts in messaging_opts.list_opts():
        if group in (None, "DEFAULT"):
            CONF.register_opts(opts)
    CONF.set_default("transport_url", "fake://")
    CONF.set_default("auth_strategy", "noauth", group="api")
    CONF.set_default("host_ip", "127.0.0.1", group="api")
    CONF.set_default("wsproxy_host", "127.0.0.1", group="websocket_proxy")
    CONF.set_default("driver", "docker", group="network")
    # Offline laptops have no pause image: capsules then use the local fallback sandbox.
    CONF.set_default("sandbox_image_pull_policy", "never")


def resolve_state_dir(requested: str | None) -> Path:
    """``--state-dir`` wins over ``[DEFAULT]/state_path``; the database defaults to a SQLite
    file there (a file's ``[database]/connection`` still wins). After parsing the config."""
    from zun.conf import CONF

    if requested:
        CONF.set_override("state_path", str(Path(requested).resolve()))
    state_dir = Path(CONF.state_path).resolve()
    CONF.set_default("connection", f"sqlite:///{state_dir / 'zun.sqlite'}", group="database")
    return state_dir


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv if argv is None else argv)
    own, rest = _parse_own_args(argv[1:])
    helping = "-h" in rest or "--help" in rest
    weight = None if helping else cpu_weight.enter_own_session(own.cpu_nice)
    from zun.cmd import common
    from zun.conf import CONF
    from zun.service import state_dir as state_files
    from zun.service.state_lock import StateDirLocked, StateLock

    apply_embedded_defaults()
    common.prepare(["zun-all", *rest], default_config_files=[])
    state_dir = resolve_state_dir(own.state_dir)
    if own.port is not None:
        CONF.set_override("port", own.port, group="api")
    if own.bind is not None:
        CONF.set_override("host_ip", own.bind, group="api")
        CONF.set_override("wsproxy_host", own.bind, group="websocket_proxy")
    if own.wsproxy_port is not None:
        CONF.set_override("wsproxy_port", own.wsproxy_port, group="websocket_proxy")

    if not common.scheduler_config_ok("zun-all"):
        return 2
    # Private before anything is written into it: the database holds encrypted secrets.
    state_files.secure(
        state_dir, sqlite=CONF.database.connection == f"sqlite:///{state_dir / state_files.DB_FILE}"
    )
    if weight is not None:
        LOG.info("CPU weight: %s", weight)
    lock = StateLock(state_dir)
    try:
        lock.acquire()
    except StateDirLocked as exc:
        print(f"zun-all: {exc}", file=sys.stderr)
        return 2
    try:
        source = state_files.use_state_key(CONF, state_dir, create=True)
        LOG.info("Secrets in the database are encrypted with the key from %s", source)
        return _run(state_dir)
    finally:
        lock.release()


def _run(state_dir: Path) -> int:
    from zun.api.app import build_app
    from zun.cmd import common
    from zun.common import rpc
    from zun.compute.agent import ComputeAgent
    from zun.compute.node_monitor import NodeMonitor
    from zun.conf import CONF
    from zun.db import engine, migration
    from zun.service import runner
    from zun.service.api_server import ApiServer

    LOG.info("Embedded mode: state directory %s", state_dir)
    engine.configure()
    migration.upgrade("head")
    rpc.init(CONF)
    components: list[runner.Component] = [ComputeAgent(common.hostname())]
    components.append(
        ApiServer(
            build_app(), CONF.api.host_ip, CONF.api.port, threads=max(4, CONF.api.workers or 8)
        )
    )
    components.append(NodeMonitor())
    proxy = _console_proxy()
    if proxy is not None:
        components.append(proxy)

    def _cleanup() -> None:
        rpc.cleanup()
        engine.dispose()

    def _ready() -> None:
        # What start-up imported and built lives as long as the process: out of the
        # collector's reach. Otherwise every full collection walks it all (about 150,000
        # objects: 60-130 ms of CPU, in the middle of whichever request set it off).
        gc.freeze()
        LOG.info("zun-all ready on http://%s:%s", CONF.api.host_ip, CONF.api.port)

    return runner.run(components, on_exit=_cleanup, ready=_ready)


def _console_proxy() -> runner.Component | None:
    try:
        from zun.console.server import ConsoleProxy
    except ModuleNotFoundError:
        return None
    return ConsoleProxy.from_conf()


if __name__ == "__main__":
    sys.exit(main())
