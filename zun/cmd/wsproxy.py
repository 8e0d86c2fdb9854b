"""zun-wsproxy: the WebSocket console proxy for interactive exec and attach."""

from __future__ import annotations

import sys

from zun.cmd import common
from zun.conf import CONF
from zun.service import runner


def main(argv: list[str] | None = None) -> int:
    common.prepare(argv)
    from zun.common import rpc
    from zun.db import engine

    try:
        from zun.console.server import ConsoleProxy
    except ModuleNotFoundError:
        print("zun-wsproxy: the console proxy is not part of this build yet", file=sys.stderr)
        return 2
    engine.configure()
    rpc.init(CONF)

    def _cleanup() -> None:
        rpc.cleanup()
        engine.dispose()

    return runner.run([ConsoleProxy.from_conf()], on_exit=_cleanup)


if __name__ == "__main__":
    sys.exit(main())
