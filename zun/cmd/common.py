"""What every command does first: parse the configuration, set up logging."""

from __future__ import annotations

import socket
import sys
from collections.abc import Sequence

from zun.common import log as zun_log
from zun.conf import CONF, parse_args


def prepare(argv: Sequence[str] | None = None,
            default_config_files: list[str] | None = None) -> None:
    parse_args(list(sys.argv if argv is None else argv), default_config_files)
    zun_log.setup(debug=CONF.debug)


def hostname() -> str:
    return CONF.host or socket.gethostname()
