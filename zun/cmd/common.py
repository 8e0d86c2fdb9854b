"""What every command does first: parse the configuration, set up logging."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Sequence

from zun.common import log as zun_log
from zun.conf import CONF, parse_args


def prepare(
    argv: Sequence[str] | None = None, default_config_files: list[str] | None = None
) -> None:
    argv = list(sys.argv if argv is None else argv)
    parse_args(argv, default_config_files)
    zun_log.setup(debug=CONF.debug, log_file=_log_file(os.path.basename(argv[0])))


def _log_file(prog: str) -> str | None:
    """oslo.log's --log-file, or <log_dir>/<prog>.log; None logs to stderr."""
    if CONF.log_file:
        if CONF.log_dir and not os.path.isabs(CONF.log_file):
            return os.path.join(CONF.log_dir, CONF.log_file)
        return CONF.log_file
    if CONF.log_dir:
        return os.path.join(CONF.log_dir, f"{prog}.log")
    return None


def scheduler_config_ok(prog: str) -> bool:
    """Check [scheduler] once at start-up (scheduling runs in this process); False after
    printing why, so the command exits instead of failing every create later."""
    from zun.scheduler import loading

    try:
        loading.check_config()
    except loading.SchedulerConfigError as exc:
        print(f"{prog}: configuration error: {exc}", file=sys.stderr)
        return False
    return True


def hostname() -> str:
    return CONF.host or socket.gethostname()
