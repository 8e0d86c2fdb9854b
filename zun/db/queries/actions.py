"""Container actions (one per user request) and their events (one per step on a node).

The API records the action when it accepts a request (``request_id`` = the request's
``x-openstack-request-id``); the node records events named like Zun's
(``compute__do_container_start``) and finishes them. Finishing an event also finishes its
action (``finish_time``; ``message`` "Error" when the result is an error), which is what
clients poll for.
"""

from __future__ import annotations

import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from zun.common.context import RequestContext
from zun.db import models

A = models.ContainerAction
E = models.ContainerActionEvent

RESULT_SUCCESS = "Success"
RESULT_ERROR = "Error"


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def start_action(
    session: Session, context: RequestContext, container_uuid: str, action: str
) -> models.ContainerAction:
    """Record that ``action`` was requested on the container by this request."""
    row = A(
        action=action,
        container_uuid=container_uuid,
        request_id=context.request_id,
        user_id=context.user_id,
        project_id=context.project_id,
        start_time=_now(),
    )
    session.add(row)
    session.flush()
    return row


def _find(session: Session, container_uuid: str, request_id: str) -> models.ContainerAction | None:
    return session.scalars(
        sa.select(A)
        .where(A.container_uuid == container_uuid, A.request_id == request_id)
        .order_by(A.id.desc())
        .limit(1)
    ).first()


def finish_action(
    session: Session, container_uuid: str, request_id: str, error: bool = False
) -> bool:
    """Set ``finish_time`` (and ``message`` "Error" on failure) of the request's action."""
    values: dict[str, Any] = {"finish_time": _now()}
    if error:
        values["message"] = RESULT_ERROR
    changed = session.execute(
        sa.update(A)
        .where(A.container_uuid == container_uuid, A.request_id == request_id)
        .values(**values)
    ).rowcount
    return changed > 0


def start_event(
    session: Session, container_uuid: str, request_id: str, event: str
) -> models.ContainerActionEvent | None:
    """Record that ``event`` started for the request's action (None when no action exists)."""
    action = _find(session, container_uuid, request_id)
    if action is None:
        return None
    row = E(event=event, action_id=action.id, start_time=_now())
    session.add(row)
    session.flush()
    return row


def finish_event(
    session: Session,
    container_uuid: str,
    request_id: str,
    event: str,
    result: str = RESULT_SUCCESS,
    traceback: str | None = None,
    finish_action_too: bool = True,
) -> bool:
    """Finish the newest open ``event`` of the request's action with ``result``."""
    action = _find(session, container_uuid, request_id)
    if action is None:
        return False
    now = _now()
    target = session.scalars(
        sa.select(E)
        .where(E.action_id == action.id, E.event == event)
        .order_by(E.finish_time.is_(None).desc(), E.id.desc())
        .limit(1)
    ).first()
    if target is None:
        target = E(event=event, action_id=action.id, start_time=now)
        session.add(target)
    target.finish_time = now
    target.result = result
    target.traceback = traceback
    if finish_action_too:
        action.finish_time = now
        if result == RESULT_ERROR:
            action.message = RESULT_ERROR
    session.flush()
    return True


def list_for_container(session: Session, container_uuid: str) -> list[models.ContainerAction]:
    """The container's actions, newest first."""
    return list(
        session.scalars(
            sa.select(A)
            .where(A.container_uuid == container_uuid)
            .order_by(A.created_at.desc(), A.id.desc())
        )
    )


def get_with_events(
    session: Session,
    container_uuid: str,
    request_id: str,
) -> tuple[models.ContainerAction, list[models.ContainerActionEvent]] | None:
    action = _find(session, container_uuid, request_id)
    if action is None:
        return None
    events = list(
        session.scalars(
            sa.select(E).where(E.action_id == action.id).order_by(E.created_at.desc(), E.id.desc())
        )
    )
    return action, events
