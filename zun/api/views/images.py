"""The image view (rest-api.md §16.3): always with links."""

from __future__ import annotations

from typing import Any

from zun.api import common
from zun.db.models import Image

FIELDS = ("image_id", "repo", "tag", "size", "project_id", "host")


def image_view(row: Image, host_url: str) -> dict[str, Any]:
    view: dict[str, Any] = {
        "uuid": row.uuid,
        "links": common.links(host_url, "images", row.uuid or ""),
    }
    for name in FIELDS:
        view[name] = getattr(row, name)
    return view
