"""zun-api: the REST API (scheduling runs inside it)."""

from __future__ import annotations

import sys

from zun.cmd import common
from zun.conf import CONF
from zun.service import runner


def main(argv: list[str] | None = None) -> int:
    common.prepare(argv)
    from zun.api.app import build_app
    from zun.common import rpc
    from zun.db import engine
    from zun.service.api_server import ApiServer

    engine.configure()
    rpc.init(CONF)

    def _cleanup() -> None:
        rpc.cleanup()
        engine.dispose()

    server = ApiServer(build_app(), CONF.api.host_ip, CONF.api.port,
                       threads=max(4, CONF.api.workers or 8))
    return runner.run([server], on_exit=_cleanup)


if __name__ == "__main__":
    sys.exit(main())
