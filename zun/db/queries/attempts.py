"""Where a create was tried: one ``schedule_attempt`` event per host, under its action.

The event's ``details`` keep what the node needs to (re)do the create — ``run``, the
requested networks and volumes, whether the requester was an admin — so a create or an
evacuation can be replayed on another host without the original request. ``details`` is not
part of any API view.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from zun.db import models

A = models.ContainerAction
E = models.ContainerActionEvent

EVENT = "schedule_attempt"
#: Actions whose work is a create on some host.
CREATE_ACTIONS = ("create", "evacuate")


@dataclass
class Attempt:
    """The newest create-like action of a container and its attempts so far."""

    action_id: int
    request_id: str | None
    user_id: str | None
    project_id: str | None
    count: int
    hosts: list[str] = field(default_factory=list)
    request: dict[str, Any] = field(default_factory=dict)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def record(
    session: Session, action_id: int, host: str, number: int, request: dict[str, Any]
) -> None:
    """A finished Success event: attempt ``number`` of the action goes to ``host``."""
    now = _now()
    details = json.dumps({**request, "host": host, "attempt": number})
    session.add(
        E(
            event=EVENT,
            action_id=action_id,
            start_time=now,
            finish_time=now,
            result="Success",
            details=details,
            created_at=now,
        )
    )
    session.flush()


def record_failure(session: Session, action_id: int, host: str | None, reason: str) -> None:
    """An Error event saying why the attempt on ``host`` was given up."""
    now = _now()
    session.add(
        E(
            event="compute__do_container_create",
            action_id=action_id,
            start_time=now,
            finish_time=now,
            result="Error",
            traceback=f"Host {host}: {reason}" if host else reason,
            created_at=now,
        )
    )
    session.flush()


def latest(session: Session, container_uuid: str) -> Attempt | None:
    """The newest create or evacuate action of the container with its attempts."""
    action = session.execute(
        sa.select(A.id, A.request_id, A.user_id, A.project_id)
        .where(A.container_uuid == container_uuid, A.action.in_(CREATE_ACTIONS))
        .order_by(A.id.desc())
        .limit(1)
    ).first()
    if action is None:
        return None
    details = list(
        session.scalars(
            sa.select(E.details).where(E.action_id == action.id, E.event == EVENT).order_by(E.id)
        )
    )
    parsed = []
    for text in details:
        try:
            parsed.append(json.loads(text or "{}"))
        except ValueError:
            parsed.append({})
    request = dict(parsed[-1]) if parsed else {}
    request.pop("host", None)
    request.pop("attempt", None)
    return Attempt(
        action_id=action.id,
        request_id=action.request_id,
        user_id=action.user_id,
        project_id=action.project_id,
        count=len(parsed),
        hosts=[str(p.get("host")) for p in parsed if p.get("host")],
        request=request,
    )
