"""The availability-zone view (rest-api.md §16.8)."""

from __future__ import annotations

from typing import Any


def zone_view(zone: str | None) -> dict[str, Any]:
    return {"availability_zone": zone}
