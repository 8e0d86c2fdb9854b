"""Container action and event views (rest-api.md §16.10): ISO ``T`` datetimes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from zun.api import common
from zun.db import models


def action_view(action: models.ContainerAction) -> dict[str, Any]:
    return {
        "action": action.action,
        "container_uuid": action.container_uuid,
        "request_id": action.request_id,
        "user_id": action.user_id,
        "project_id": action.project_id,
        "start_time": common.format_iso_datetime(action.start_time),
        "finish_time": common.format_iso_datetime(action.finish_time),
        "message": action.message,
    }


def event_view(event: models.ContainerActionEvent, show_traceback: bool) -> dict[str, Any]:
    return {
        "event": event.event,
        "start_time": common.format_iso_datetime(event.start_time),
        "finish_time": common.format_iso_datetime(event.finish_time),
        "result": event.result,
        "traceback": event.traceback if show_traceback else None,
    }


def action_with_events(
    action: models.ContainerAction,
    events: Iterable[models.ContainerActionEvent],
    show_traceback: bool,
) -> dict[str, Any]:
    view = action_view(action)
    view["events"] = [event_view(e, show_traceback) for e in events]
    return view
