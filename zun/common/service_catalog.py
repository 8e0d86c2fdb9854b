"""How zun reaches the other OpenStack services: the catalog interface named by a
``[*_client]/endpoint_type`` and the TLS settings of that group."""

from __future__ import annotations

from typing import Any

# The original's endpoint_type values are the catalog's old names; keystoneauth wants the
# interface names (an unknown value is passed on as it is).
_INTERFACES = {"publicURL": "public", "internalURL": "internal", "adminURL": "admin"}


def interface(endpoint_type: str) -> str:
    return _INTERFACES.get(endpoint_type, endpoint_type)


def tls_options(group: Any) -> dict[str, Any]:
    """``verify``/``cert`` for keystoneauth requests to a service, from its group's
    ``ca_file``, ``cert_file``, ``key_file`` and ``insecure`` (empty when none is set, so the
    session's own settings apply)."""
    tls: dict[str, Any] = {}
    if group.insecure:
        tls["verify"] = False
    elif group.ca_file:
        tls["verify"] = group.ca_file
    if group.cert_file:
        tls["cert"] = (group.cert_file, group.key_file) if group.key_file else group.cert_file
    return tls
