"""The WSGI entry point for uwsgi or mod_wsgi: ``zun.wsgi.api:application``.

Reads /etc/zun/zun.conf (or the files named in ZUN_CONFIG_FILES, separated by commas).
"""

from __future__ import annotations

import os

from zun.cmd import common
from zun.conf import CONF


def init_application():
    files = os.environ.get("ZUN_CONFIG_FILES")
    default_files = [f for f in files.split(",") if f] if files else None
    common.prepare(["zun-api"], default_config_files=default_files)
    from zun.api.app import build_app
    from zun.common import rpc
    from zun.db import engine

    engine.configure()
    rpc.init(CONF)
    return build_app()


application = init_application()
