"""Stats summary, engine error translation and argument parsing of the driver."""

from __future__ import annotations

import datetime

import docker.errors
import pytest
import requests

from zun.common import exception
from zun.runtime.docker import client as docker_client
from zun.runtime.docker import driver, stats

RAW = {
    "cpu_stats": {
        "cpu_usage": {"total_usage": 3_000_000_000},
        "system_cpu_usage": 20_000_000_000,
        "online_cpus": 2,
    },
    "precpu_stats": {
        "cpu_usage": {"total_usage": 1_000_000_000},
        "system_cpu_usage": 10_000_000_000,
    },
    "memory_stats": {
        "usage": 12 << 20,
        "limit": 64 << 20,
        "stats": {"total_inactive_file": 4 << 20},
    },
    "blkio_stats": {
        "io_service_bytes_recursive": [
            {"op": "Read", "value": 100},
            {"op": "Write", "value": 50},
            {"op": "read", "value": 1},
            {"op": "Total", "value": 151},
        ]
    },
    "networks": {"eth0": {"rx_bytes": 10, "tx_bytes": 20}, "eth1": {"rx_bytes": 1, "tx_bytes": 2}},
}


def test_summarize() -> None:
    assert stats.summarize("web", RAW) == {
        "CONTAINER": "web",
        "CPU %": 40.0,  # 2e9 / 10e9 * 2 cpus
        "MEM USAGE(MiB)": 8.0,
        "MEM LIMIT(MiB)": 64.0,
        "MEM %": 12.5,
        "BLOCK I/O(B)": "101/50",
        "NET I/O(B)": "11/22",
    }


def test_summarize_of_a_sparse_document() -> None:
    out = stats.summarize("x", {"memory_stats": {}, "blkio_stats": {}})
    assert out["CPU %"] == 0.0 and out["MEM %"] == 0.0
    assert out["BLOCK I/O(B)"] == "0/0" and out["NET I/O(B)"] == "0/0"


def _api_error(status: int, message: str) -> docker.errors.APIError:
    response = requests.Response()
    response.status_code = status
    return docker.errors.APIError(f"{status} error", response=response, explanation=message)


def test_not_found_is_recognised_by_code() -> None:
    exc = docker_client.to_zun_exception(_api_error(404, "No such container: abc"))
    assert isinstance(exc, exception.DockerError)
    assert exc.code == 404
    assert docker_client.is_not_found(exc)
    assert "No such container: abc" in str(exc)


def test_conflict_keeps_the_engine_explanation() -> None:
    exc = docker_client.to_zun_exception(_api_error(409, "container is paused"))
    assert isinstance(exc, exception.Conflict)
    assert str(exc) == "container is paused"
    assert not docker_client.is_not_found(exc)


def test_other_errors_are_docker_errors() -> None:
    exc = docker_client.to_zun_exception(_api_error(500, "boom"))
    assert isinstance(exc, exception.DockerError)
    assert exc.code == 500
    assert str(exc) == "Docker internal error: boom."


def test_translate_errors_chains_the_cause() -> None:
    original = _api_error(404, "gone")
    with pytest.raises(exception.DockerError) as info:
        with docker_client.translate_errors():
            raise original
    assert info.value.__cause__ is original


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, None),
        ("", None),
        ("9", 9),
        (15, 15),
        ("kill", "SIGKILL"),
        ("SIGTERM", "SIGTERM"),
        ("sigusr1", "SIGUSR1"),
    ],
)
def test_signal_argument(given: object, expected: object) -> None:
    assert driver._signal_arg(given) == expected


def test_since_argument() -> None:
    assert driver._since_arg(None) is None
    assert driver._since_arg("") is None
    assert driver._since_arg("1700000000") == 1700000000
    assert driver._since_arg("2026-01-15 11:00:00,500") == datetime.datetime(
        2026, 1, 15, 11, 0, 0, 500000
    )
    with pytest.raises(exception.InvalidValue):
        driver._since_arg("yesterday")


def test_tail_argument() -> None:
    assert driver._tail_arg("all") == "all"
    assert driver._tail_arg(None) == "all"
    assert driver._tail_arg("10") == 10
    with pytest.raises(exception.InvalidValue):
        driver._tail_arg("ten")


def test_host_memory_reads_meminfo(tmp_path) -> None:  # type: ignore[no-untyped-def]
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:  2097152 kB\nMemFree:   524288 kB\nMemAvailable: 1048576 kB\n")
    assert driver.host_memory(str(meminfo)) == {
        "mem_total": 2048,
        "mem_free": 512,
        "mem_available": 1024,
        "mem_used": 1024,
    }
