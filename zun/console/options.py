"""The console's settings, read through fallbacks.

``[websocket_proxy]`` is registered by :mod:`zun.conf.websocket_proxy`; the ``relay_*`` options
are the rewrite's own (the relay does not exist in Zun) and are read with their defaults until
``zun.conf`` registers them:

* ``relay_host``: address the node's relay binds to and advertises (default ``$my_ip``);
* ``relay_port``: its port (default 0: any free port, told to the proxy over RPC);
* ``relay_cert`` / ``relay_key``: when set, the relay speaks TLS;
* ``relay_ca_file``: CA bundle the proxy checks a TLS relay's certificate against.
"""

from __future__ import annotations

import ssl
from typing import Any

from zun.common.utils import conf_value

GROUP = "websocket_proxy"


def get(name: str, default: Any) -> Any:
    value = conf_value(GROUP, name, default)
    return default if value is None else value


def my_ip() -> str:
    return str(conf_value(None, "my_ip", None) or "127.0.0.1")


def relay_host() -> str:
    return str(get("relay_host", "") or my_ip())


def relay_port() -> int:
    return int(get("relay_port", 0) or 0)


def relay_server_ssl() -> ssl.SSLContext | None:
    cert = get("relay_cert", "")
    if not cert:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, get("relay_key", "") or None)
    return context


def relay_client_ssl() -> ssl.SSLContext:
    ca_file = get("relay_ca_file", "") or None
    return ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca_file)
