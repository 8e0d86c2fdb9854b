"""Docker's raw stats document, summarised as the ``zun stats`` table.

Keys and units are Zun's (the client prints them as they are). The CPU percentage is the
engine's own formula (usage delta over system delta, times online CPUs) rather than Zun's
ratio of lifetime counters, which barely moves on a long-running container.
"""

from __future__ import annotations

from typing import Any

_MIB = float(1 << 20)


def _cpu_percent(raw: dict[str, Any]) -> float:
    cpu = raw.get("cpu_stats") or {}
    pre = raw.get("precpu_stats") or {}
    cpu_delta = ((cpu.get("cpu_usage") or {}).get("total_usage") or 0) - (
        (pre.get("cpu_usage") or {}).get("total_usage") or 0
    )
    system_delta = (cpu.get("system_cpu_usage") or 0) - (pre.get("system_cpu_usage") or 0)
    online = (
        cpu.get("online_cpus") or len((cpu.get("cpu_usage") or {}).get("percpu_usage") or []) or 1
    )
    if cpu_delta <= 0 or system_delta <= 0:
        return 0.0
    return cpu_delta / system_delta * online * 100.0


def _memory_usage(memory: dict[str, Any]) -> int:
    usage = memory.get("usage") or 0
    detail = memory.get("stats") or {}
    # Page cache that the kernel can drop is not the container's (docker stats does the same).
    cache = detail.get("total_inactive_file", detail.get("inactive_file", 0)) or 0
    return usage - cache if 0 < cache < usage else usage


def _block_io(raw: dict[str, Any]) -> tuple[int, int]:
    read = write = 0
    entries = (raw.get("blkio_stats") or {}).get("io_service_bytes_recursive") or []
    for entry in entries:
        op = str(entry.get("op", "")).lower()
        if op == "read":
            read += entry.get("value") or 0
        elif op == "write":
            write += entry.get("value") or 0
    return read, write


def _net_io(raw: dict[str, Any]) -> tuple[int, int]:
    rx = tx = 0
    for iface in (raw.get("networks") or {}).values():
        rx += iface.get("rx_bytes") or 0
        tx += iface.get("tx_bytes") or 0
    return rx, tx


def summarize(name: str | None, raw: dict[str, Any]) -> dict[str, Any]:
    """``{"CONTAINER", "CPU %", "MEM USAGE(MiB)", "MEM LIMIT(MiB)", "MEM %", "BLOCK I/O(B)",
    "NET I/O(B)"}``; the two I/O values are ``"<read>/<write>"`` and ``"<rx>/<tx>"`` strings."""
    memory = raw.get("memory_stats") or {}
    usage = _memory_usage(memory)
    limit = memory.get("limit") or 0
    read, write = _block_io(raw)
    rx, tx = _net_io(raw)
    return {
        "CONTAINER": name,
        "CPU %": _cpu_percent(raw),
        "MEM USAGE(MiB)": usage / _MIB,
        "MEM LIMIT(MiB)": limit / _MIB,
        "MEM %": usage / limit * 100.0 if limit else 0.0,
        "BLOCK I/O(B)": f"{read}/{write}",
        "NET I/O(B)": f"{rx}/{tx}",
    }
