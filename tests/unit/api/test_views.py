"""Service state and view shapes (rest-api.md §12, §16.5)."""

from __future__ import annotations

import datetime

from zun.api.views import services
from zun.db.models import ZunService

NOW = datetime.datetime(2026, 1, 15, 12, 0, 0)


def _service(**values: object) -> ZunService:
    values.setdefault("created_at", NOW - datetime.timedelta(days=1))
    return ZunService(id=1, host="h", binary="zun-compute", report_count=3, **values)


def test_state_from_the_last_heartbeat() -> None:
    at = NOW - datetime.timedelta(seconds=180)
    assert services.is_up(_service(last_seen_up=at), NOW, 180)
    assert not services.is_up(_service(last_seen_up=at - datetime.timedelta(seconds=1)), NOW, 180)
    # updated_at, then created_at, stand in for a missing last_seen_up.
    assert services.is_up(_service(updated_at=NOW), NOW, 180)
    assert services.is_up(_service(created_at=NOW), NOW, 180)
    assert not services.is_up(_service(), NOW, 180)


def test_forced_down_is_down() -> None:
    assert not services.is_up(_service(last_seen_up=NOW, forced_down=True), NOW, 180)


def test_view_defaults_zone_and_formats_iso() -> None:
    view = services.service_view(_service(last_seen_up=NOW, disabled=None, forced_down=None), NOW)
    assert view == {
        "id": 1,
        "host": "h",
        "binary": "zun-compute",
        "state": "up",
        "disabled": False,
        "disabled_reason": None,
        "forced_down": False,
        "availability_zone": "nova",
        "report_count": 3,
        "last_seen_up": "2026-01-15T12:00:00.000000",
        "created_at": "2026-01-14T12:00:00.000000",
        "updated_at": None,
    }
