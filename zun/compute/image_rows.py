"""The ``image`` row of each image a node pulled: one per (repo, tag, host)."""

from __future__ import annotations

import threading
from typing import Any

from zun.db import engine
from zun.db.queries import node as node_q


class ImageRows:
    """Writes a node's image row only when the image behind (repo, tag) changed: a create on
    the hot path usually finds the row already right and writes nothing."""

    def __init__(self, host: str) -> None:
        self.host = host
        self._known: dict[tuple[str, str | None], str] = {}
        self._lock = threading.Lock()

    def record(self, repo: str, tag: str | None, info: dict[str, Any],
               project_id: str | None, user_id: str | None) -> None:
        key = (repo, tag)
        with self._lock:
            if self._known.get(key) == info["image_id"]:
                return
        with engine.transaction() as session:
            node_q.record_image(session, repo=repo, tag=tag, host=self.host,
                                image_id=info["image_id"], size=info.get("size"),
                                project_id=project_id, user_id=user_id)
        with self._lock:
            self._known[key] = info["image_id"]
