"""The console relay's settings (``[websocket_proxy]/relay_*``, added by the rewrite and
registered by :mod:`zun.conf.websocket_proxy` with their defaults):

* ``relay_host``: address the node's relay binds to and advertises (empty: ``$my_ip``);
* ``relay_port``: its port (0: any free port, told to the proxy over RPC);
* ``relay_cert`` / ``relay_key``: when set, the relay speaks TLS;
* ``relay_ca_file``: CA bundle the proxy checks a TLS relay's certificate against.
"""

from __future__ import annotations

import ssl

from zun.conf import CONF


def my_ip() -> str:
    return str(CONF.my_ip or "127.0.0.1")


def relay_host() -> str:
    return str(CONF.websocket_proxy.relay_host or my_ip())


def relay_port() -> int:
    return int(CONF.websocket_proxy.relay_port or 0)


def relay_server_ssl() -> ssl.SSLContext | None:
    cert = CONF.websocket_proxy.relay_cert
    if not cert:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, CONF.websocket_proxy.relay_key or None)
    return context


def relay_client_ssl() -> ssl.SSLContext:
    ca_file = CONF.websocket_proxy.relay_ca_file or None
    return ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca_file)
