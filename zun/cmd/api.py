"""zun-api: the REST API (scheduling runs inside it).

``[api] workers`` processes (one per CPU when unset) share one listening socket; with one
worker the API runs in this process.
"""

from __future__ import annotations

import gc
import os
import socket
import sys
from typing import TYPE_CHECKING

from zun.cmd import common
from zun.conf import CONF
from zun.service import runner

if TYPE_CHECKING:
    from zun.service.connection_spread import Seat

# Request threads in each worker process: they mostly wait on the database and the bus.
THREADS_PER_WORKER = 8


def workers() -> int:
    return max(1, CONF.api.workers or os.cpu_count() or 1)


def main(argv: list[str] | None = None) -> int:
    common.prepare(argv)
    if not common.scheduler_config_ok("zun-api"):
        return 2
    from zun.api.app import load_handlers
    from zun.service import prefork
    from zun.service.api_server import bind_socket
    from zun.service.connection_spread import ConnectionLedger

    # Imported before forking, so the children share these pages with the parent.
    load_handlers()
    import zun.compute.api  # noqa: F401
    import zun.db.queries  # noqa: F401

    sock = bind_socket(CONF.api.host_ip, CONF.api.port)
    count = workers()
    if count == 1:
        return serve(sock)
    # What the parent imported is shared with the workers until something writes to it, and
    # a garbage collection writes to every object it visits: frozen objects are never visited.
    gc.freeze()
    ledger = ConnectionLedger(count)
    try:
        return prefork.run_workers(
            count, lambda slot: serve(sock, ledger.seat(slot)), on_exit=ledger.vacate
        )
    finally:
        sock.close()


def serve(sock: socket.socket, seat: Seat | None = None) -> int:
    """One API process: its own engine, transport and application on the shared socket."""
    from zun.api.app import build_app
    from zun.common import rpc
    from zun.compute.node_monitor import NodeMonitor
    from zun.db import engine
    from zun.service.api_server import ApiServer

    engine.configure()
    rpc.init(CONF)

    def _cleanup() -> None:
        rpc.cleanup()
        engine.dispose()

    server = ApiServer(
        build_app(),
        CONF.api.host_ip,
        CONF.api.port,
        threads=THREADS_PER_WORKER,
        sock=sock,
        seat=seat,
    )
    # The modules, configuration and application live as long as the process: take them out
    # of the collector's reach. A 1000-row page allocates enough objects to trigger full
    # collections, each of which walked every one of them (about a quarter of the page's
    # CPU in benchmarks/read_path.py).
    gc.freeze()
    # Creates stuck on a dead node move elsewhere; no conductor does it for us. Every worker
    # runs one, but a pass needs the node monitor lease: one pass at a time across all the
    # API processes and hosts (and each move is a compare-and-swap besides).
    return runner.run([server, NodeMonitor()], on_exit=_cleanup)


if __name__ == "__main__":
    sys.exit(main())
