"""The service view (rest-api.md §16.5): datetimes in the ISO ``T`` format."""

from __future__ import annotations

import datetime
from typing import Any

from oslo_utils import timeutils

from zun.api import common
from zun.conf import CONF
from zun.db.models import ZunService


def is_up(
    service: ZunService, now: datetime.datetime | None = None, down_time: int | None = None
) -> bool:
    """Up when not forced down and its last heartbeat is within ``service_down_time``.

    The heartbeat is ``last_seen_up``, else ``updated_at``, else ``created_at``.
    """
    if service.forced_down:
        return False
    beat = service.last_seen_up or service.updated_at or service.created_at
    if beat is None:
        return False
    now = now or timeutils.utcnow()
    if down_time is None:
        down_time = int(CONF.service_down_time)
    return abs((now - beat).total_seconds()) <= down_time


def service_view(service: ZunService, now: datetime.datetime | None = None) -> dict[str, Any]:
    zone = service.availability_zone or CONF.default_availability_zone
    return {
        "id": service.id,
        "host": service.host,
        "binary": service.binary,
        "state": "up" if is_up(service, now) else "down",
        "disabled": bool(service.disabled),
        "disabled_reason": service.disabled_reason,
        "forced_down": bool(service.forced_down),
        "availability_zone": zone,
        "report_count": service.report_count,
        "last_seen_up": common.format_iso_datetime(service.last_seen_up),
        "created_at": common.format_iso_datetime(service.created_at),
        "updated_at": common.format_iso_datetime(service.updated_at),
    }
