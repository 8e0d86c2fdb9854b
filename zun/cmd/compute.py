"""zun-compute: the agent of one node."""

from __future__ import annotations

import sys

from zun.cmd import common
from zun.conf import CONF
from zun.service import runner


def main(argv: list[str] | None = None) -> int:
    common.prepare(argv)
    from zun.common import rpc
    from zun.compute.agent import ComputeAgent
    from zun.db import engine

    engine.configure()
    rpc.init(CONF)

    def _cleanup() -> None:
        rpc.cleanup()
        engine.dispose()

    return runner.run([ComputeAgent(common.hostname())], on_exit=_cleanup)


if __name__ == "__main__":
    sys.exit(main())
