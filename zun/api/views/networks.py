"""The network view (rest-api.md §16.7): no links."""

from __future__ import annotations

from typing import Any

from zun.db.models import Network

FIELDS = ("uuid", "name", "project_id", "user_id", "network_id", "neutron_net_id")


def network_view(row: Network) -> dict[str, Any]:
    return {name: getattr(row, name) for name in FIELDS}
