"""Quota bodies (rest-api.md §16.11): limits, or limits with what is in use."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zun.compute import quota


def limits_view(limits: Mapping[str, int]) -> dict[str, int]:
    """``{"containers": n, "memory": n, "cpu": n, "disk": n}``."""
    return {res: int(limits[res]) for res in quota.RESOURCES}


def _in_use(resource: str, value: float) -> int | float:
    # cpu is a sum of floats (rounded to 3 decimals, as Zun does); the others are integers.
    if resource == "cpu":
        return round(float(value), 3)
    return int(value)


def usages_view(usages: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, Any]]:
    """``{"<res>": {"limit": n, "in_use": m}}``."""
    return {
        res: {"limit": int(usages[res]["limit"]), "in_use": _in_use(res, usages[res]["in_use"])}
        for res in quota.RESOURCES
    }
