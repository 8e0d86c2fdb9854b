"""zun-api or zun-compute with _create_probe.py's step timers (used by create_distributed.py).

    python benchmarks/_distributed_probe.py api|compute <arguments of the service>

The same wrappers as ``_create_probe.py`` (one JSON line per step of a create, to the file
named by ``ZUN_BENCH_STEPS``), installed in a distributed service: in zun-api the API's steps
fire, in zun-compute the node's. Nothing in ``zun/`` knows about it.
"""

from __future__ import annotations

import sys

import _create_probe

if __name__ == "__main__":
    service = sys.argv[1]
    _create_probe.install()
    if service == "api":
        from zun.cmd.api import main
    elif service == "compute":
        from zun.cmd.compute import main
    else:
        raise SystemExit(f"api or compute, not {service!r}")
    sys.exit(main([f"zun-{service}", *sys.argv[2:]]))
