"""The scheduler's configuration, checked once when zun-api (or zun-all) starts.

``[scheduler]/driver``: ``filter_scheduler`` (filters, then weighers) or ``chance_scheduler``
(a random node among those up and enabled), Zun's names. ``fake_scheduler`` exists in Zun
only for its own unit tests and is refused.

``[scheduler]/available_filters``: dotted paths, as in Zun. ``zun.scheduler.filters.all_filters``
makes every filter available; a path ending in one of the filter names (Zun's class paths,
e.g. ``zun.scheduler.filters.cpu_filter.CPUFilter``) makes that one available. Anything else
names code this service cannot load, and is refused.

``[scheduler]/enabled_filters`` must name available filters; ``[scheduler]/weigher`` is one of
:data:`zun.scheduler.weighers.WEIGHERS`. :func:`check_config` raises
:class:`SchedulerConfigError` with a message naming the option, the bad value and the known
ones, so a wrong zun.conf stops the service at start-up instead of failing every create.
"""

from __future__ import annotations

from zun.conf import CONF

DRIVERS = ("filter_scheduler", "chance_scheduler")
ALL_FILTERS_PATH = "zun.scheduler.filters.all_filters"


class SchedulerConfigError(ValueError):
    """An option of [scheduler] names something this service does not have."""


def _filter_names() -> list[str]:
    from zun.scheduler import filters

    return list(filters.FILTERS)


def _available(paths: list[str]) -> tuple[set[str], list[str]]:
    """(available names, entries that name nothing known)."""
    known = _filter_names()
    available: set[str] = set()
    unknown = []
    for path in paths:
        path = path.strip()
        if path == ALL_FILTERS_PATH:
            available.update(known)
        elif path.rpartition(".")[2] in known:
            available.add(path.rpartition(".")[2])
        else:
            unknown.append(path)
    return available, unknown


def available_filter_names() -> set[str]:
    paths = CONF.scheduler.available_filters
    return _available(list(paths or []))[0]


def driver_name() -> str:
    return str(CONF.scheduler.driver)


def _read_strictly(name: str) -> None:
    """Read [scheduler]/name so that a value outside its choices raises."""
    from oslo_config import cfg

    try:
        getattr(CONF.scheduler, name)
    except cfg.Error as exc:
        raise SchedulerConfigError(f"[scheduler]/{name}: {exc}") from exc


def check_config() -> None:
    """Raise SchedulerConfigError when [scheduler] names anything unknown."""
    from zun.scheduler import weighers

    for name in ("driver", "available_filters", "enabled_filters", "weigher"):
        _read_strictly(name)
    driver = driver_name()
    if driver not in DRIVERS:
        raise SchedulerConfigError(
            f"[scheduler]/driver = {driver!r} is not supported; use one of "
            f"{', '.join(DRIVERS)}"
            + (
                " (fake_scheduler is only for Zun's own unit tests)"
                if driver == "fake_scheduler"
                else ""
            )
        )
    paths = list(CONF.scheduler.available_filters or [])
    available, unknown = _available(paths)
    if unknown:
        raise SchedulerConfigError(
            f"[scheduler]/available_filters: cannot load {', '.join(map(repr, unknown))}; "
            f"use {ALL_FILTERS_PATH!r} or paths ending in one of: {', '.join(_filter_names())}"
        )
    enabled = list(CONF.scheduler.enabled_filters or [])
    missing = [name for name in enabled if name not in available]
    if missing:
        raise SchedulerConfigError(
            f"[scheduler]/enabled_filters: unknown or unavailable filter(s) "
            f"{', '.join(map(repr, missing))}; available: {', '.join(sorted(available))}"
        )
    weigher = weighers.weigher_name()
    if weigher not in weighers.WEIGHERS:
        raise SchedulerConfigError(
            f"[scheduler]/weigher = {weigher!r} is not supported; use one of "
            f"{', '.join(weighers.WEIGHERS)}"
        )
