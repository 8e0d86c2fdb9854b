"""``import zun``: no eventlet in our processes, oslo.service on its threading backend."""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import sys
import zun.cmd.all, zun.cmd.api, zun.cmd.compute  # what the processes import
import oslo_messaging
from oslo_service import backend
loaded = sorted(m for m in sys.modules
                if m.split('.')[0] in ('eventlet', 'dns') and sys.modules[m] is not None)
print(backend.get_backend_type().value, len(loaded), loaded[:5])
"""


def test_processes_import_neither_eventlet_nor_dnspython() -> None:
    # A fresh interpreter: this test process may have imported anything already.
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=True
    ).stdout.split(maxsplit=2)
    assert out[:2] == ["threading", "0"], out
