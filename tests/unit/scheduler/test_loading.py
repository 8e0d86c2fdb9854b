"""[scheduler] is checked once at start-up: Zun's names are accepted, unknown ones refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from zun.common import exception
from zun.conf import CONF
from zun.scheduler import filters, loading

OPTIONS = ("driver", "available_filters", "enabled_filters", "weigher")


@pytest.fixture
def conf() -> Iterator[Any]:
    yield CONF
    for name in OPTIONS:
        CONF.clear_override(name, group="scheduler")


def test_defaults_pass(conf: Any) -> None:
    loading.check_config()
    assert [f.__name__ for f in filters.enabled_filters()] == [
        "availability_zone_filter",
        "compute_filter",
        "runtime_filter",
    ]


def test_zuns_scheduler_options_pass_unchanged(conf: Any) -> None:
    conf.set_override("driver", "filter_scheduler", group="scheduler")
    conf.set_override("available_filters", ["zun.scheduler.filters.all_filters"], group="scheduler")
    conf.set_override(
        "enabled_filters",
        [
            "AvailabilityZoneFilter",
            "ComputeFilter",
            "RuntimeFilter",
            "CPUFilter",
            "RamFilter",
            "DiskFilter",
            "LabelFilter",
            "CpuSetFilter",
            "PciPassthroughFilter",
        ],
        group="scheduler",
    )
    loading.check_config()
    assert len(filters.enabled_filters()) == 9
    conf.set_override("driver", "chance_scheduler", group="scheduler")
    loading.check_config()


def test_zuns_class_paths_make_single_filters_available(conf: Any) -> None:
    conf.set_override(
        "available_filters",
        [
            "zun.scheduler.filters.compute_filter.ComputeFilter",
            "zun.scheduler.filters.ram_filter.RamFilter",
        ],
        group="scheduler",
    )
    conf.set_override("enabled_filters", ["ComputeFilter", "RamFilter"], group="scheduler")
    loading.check_config()
    conf.set_override("enabled_filters", ["ComputeFilter", "CPUFilter"], group="scheduler")
    with pytest.raises(loading.SchedulerConfigError) as err:
        loading.check_config()
    assert str(err.value) == (
        "[scheduler]/enabled_filters: unknown or unavailable filter(s) "
        "'CPUFilter'; available: ComputeFilter, RamFilter"
    )
    # Should the configuration change after start-up, a create still gets Zun's error.
    with pytest.raises(exception.SchedulerHostFilterNotFound):
        filters.enabled_filters()


def test_an_unknown_filter_name_is_refused_with_the_known_ones(conf: Any) -> None:
    conf.set_override("enabled_filters", ["ComputeFilter", "NoSuchFilter"], group="scheduler")
    with pytest.raises(loading.SchedulerConfigError) as err:
        loading.check_config()
    assert "'NoSuchFilter'" in str(err.value) and "CpuSetFilter" in str(err.value)


def test_an_unloadable_available_filters_entry_is_refused(conf: Any) -> None:
    conf.set_override("available_filters", ["my.site.filters.Special"], group="scheduler")
    with pytest.raises(loading.SchedulerConfigError, match="cannot load 'my.site.filters"):
        loading.check_config()


def test_zuns_test_only_driver_is_refused(conf: Any) -> None:
    conf.set_override("driver", "fake_scheduler", group="scheduler")
    with pytest.raises(loading.SchedulerConfigError, match="only for Zun's own unit tests"):
        loading.check_config()
