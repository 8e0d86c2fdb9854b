"""Zun, the OpenStack Containers service, rewritten."""

import importlib.util
import sys
import warnings

# We never use eventlet (threads and asyncio only). Left alone, oslo.messaging imports
# oslo.service, whose default backend is eventlet, and oslo.utils' eventletutils imports
# eventlet (and with it dnspython) whenever it is installed: about 120 modules and 10 MB of
# every process's memory for nothing. So oslo.service is told to use its threading backend
# (resolved lazily, the first time oslo.messaging asks), and eventlet is made unimportable:
# every library we load imports it optionally (ImportError means "not in use"). A process that
# imported eventlet before importing zun keeps it.
# The threading backend needs cotyledon (oslo.service[threading], pinned in pyproject.toml); a
# venv installed before that pin keeps the eventlet backend instead of failing to start.
if "eventlet" not in sys.modules and importlib.util.find_spec("cotyledon") is not None:
    sys.modules["eventlet"] = None  # type: ignore[assignment]

    from oslo_service import backend as _oslo_service_backend

    _oslo_service_backend.register_backend_default_hook(
        lambda: _oslo_service_backend.BackendType.THREADING
    )

# oslo.service warns when its eventlet parts are imported anyway (e.g. by a test tool).
warnings.filterwarnings("ignore", module=r"oslo_service(\..*)?$")
