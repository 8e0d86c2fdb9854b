"""cpu_weight with real processes: the fork into a session of its own, the supervisor that stays
behind (signals, exit status, death), and the cases that change the priority in place (a
session leader, no autogroups, a process in a CPU cgroup of its own).

The drivers start in the root CPU cgroup, where the kernel schedules by autogroup, wherever the
test runner is (a CI runner may sit in a cgroup of its own): the cgroup case has a test of its
own, in a cgroup each test makes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import in_ci
from zun.service import cpu_weight

# Enters its CPU weight (argv[1] = nice, argv[2] = what to do next), prints where it ended up,
# then: "exit N" exits N; "wait" sleeps until a signal's default action ends it; "handle"
# exits 3 on SIGTERM. argv[3], when given, replaces the autogroup switch (a file holding 0).
DRIVER = r"""
import json, os, signal, sys, time
from pathlib import Path
from zun.service import cpu_weight
if len(sys.argv) > 3:
    cpu_weight.AUTOGROUP_SWITCH = Path(sys.argv[3])
weight = cpu_weight.enter_own_session(int(sys.argv[1]))
if sys.argv[2] == "handle":
    signal.signal(signal.SIGTERM, lambda *_: os._exit(3))
print(json.dumps({
    "pid": os.getpid(), "ppid": os.getppid(), "sid": os.getsid(0),
    "nice": os.getpriority(os.PRIO_PROCESS, 0),
    "autogroup": Path("/proc/self/autogroup").read_text().strip(), "weight": weight,
}), flush=True)
if sys.argv[2].startswith("exit"):
    sys.exit(int(sys.argv[2].split()[1]))
while True:
    time.sleep(1)
"""

AUTOGROUPS = cpu_weight.autogroups_enabled()


def _cpu_hierarchy() -> Path | None:
    """Where the CPU controller's cgroups are: cgroup v1's cpu hierarchy, else v2's root when it
    hands the controller down."""
    for path in (Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup/cpu,cpuacct")):
        if (path / "cpu.shares").exists():
            return path
    root = Path("/sys/fs/cgroup")
    subtree = root / "cgroup.subtree_control"
    if subtree.exists() and "cpu" in subtree.read_text().split():
        return root
    return None


CPU_HIERARCHY = _cpu_hierarchy()
# Where a driver starts: the root CPU cgroup, joined only when the runner is elsewhere.
ROOT_CPU_CGROUP = CPU_HIERARCHY if cpu_weight.cpu_cgroup() is not None else None


def _join(cgroup: Path | None) -> None:
    if cgroup is not None:
        (cgroup / "cgroup.procs").write_text(str(os.getpid()))


class Driven:
    def __init__(
        self,
        nice: int,
        then: str,
        *extra: str,
        cgroup: Path | None = ROOT_CPU_CGROUP,
        **popen: object,
    ) -> None:
        preexec = popen.pop("preexec_fn", None)

        def _start() -> None:
            _join(cgroup)
            if callable(preexec):
                preexec()

        self.proc = subprocess.Popen(
            [sys.executable, "-c", DRIVER, str(nice), then, *extra],
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=_start,
            **popen,  # type: ignore[call-overload]
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"the driver printed nothing (exit {self.proc.wait(10)})"
        self.seen = json.loads(line)

    def wait(self) -> int:
        try:
            return self.proc.wait(timeout=20)
        finally:
            self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        _gone(self.seen["pid"])
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _gone(pid: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"pid {pid} outlived its supervisor")
        time.sleep(0.05)


def _own_autogroup() -> str:
    """Empty in the kernel's default autogroup (a process started by init's children without a
    session of its own, such as a CI runner's)."""
    return Path("/proc/self/autogroup").read_text().strip()


@pytest.fixture
def autogroups() -> None:
    if not AUTOGROUPS or CPU_HIERARCHY is None and cpu_weight.cpu_cgroup() is not None:
        reason = "the kernel schedules by autogroup here: no fork into a session to test"
        if in_ci():
            pytest.fail(f"{reason} (CI=true: required, not skipped)", pytrace=False)
        pytest.skip(reason)


@pytest.mark.usefixtures("autogroups")
def test_started_from_a_shell_it_forks_into_a_session_of_its_own() -> None:
    callers_group = _own_autogroup()
    driven = Driven(10, "wait")
    try:
        seen = driven.seen
        assert seen["pid"] != driven.proc.pid
        assert seen["ppid"] == driven.proc.pid
        assert seen["sid"] == seen["pid"]
        assert seen["nice"] == 10
        assert seen["autogroup"].endswith(" nice 10")
        assert seen["weight"] == (
            f"nice 10, own session's autogroup at nice 10, forked from pid {driven.proc.pid}"
        )
        # What stays behind is the bare supervisor, which ps shows with the original command.
        cmdline = Path(f"/proc/{driven.proc.pid}/cmdline").read_bytes().split(b"\0")
        assert cmdline[1:4] == [b"-S", b"-E", b"-s"]
        assert cmdline[4].endswith(b"zun/service/session_supervisor.py")
        assert cmdline[5:8] == [str(seen["pid"]).encode(), b"--", b"-c"]
        # The caller's own autogroup is left as it was.
        assert _own_autogroup() == callers_group
    finally:
        driven.close()


def test_the_exit_status_is_the_services() -> None:
    assert Driven(10, "exit 7").wait() == 7
    assert Driven(10, "exit 0").wait() == 0


def test_a_stop_signal_reaches_the_service() -> None:
    driven = Driven(10, "handle")
    driven.proc.send_signal(signal.SIGTERM)
    assert driven.wait() == 3


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_the_service_killed_by_a_signal_shows_as_that_signal(sig: signal.Signals) -> None:
    driven = Driven(10, "wait")
    driven.proc.send_signal(sig)
    assert driven.wait() == -sig


def test_a_signal_sent_to_the_service_itself_shows_as_well() -> None:
    driven = Driven(10, "wait")
    os.kill(driven.seen["pid"], signal.SIGTERM)
    assert driven.wait() == -signal.SIGTERM


def test_killing_the_supervisor_kills_the_service() -> None:
    driven = Driven(10, "wait")
    driven.proc.kill()
    assert driven.proc.wait(10) == -signal.SIGKILL
    _gone(driven.seen["pid"])
    driven.close()


def test_a_session_leader_changes_in_place() -> None:
    driven = Driven(10, "wait", start_new_session=True)
    try:
        seen = driven.seen
        assert seen["pid"] == driven.proc.pid == seen["sid"]
        assert seen["nice"] == 10
        if AUTOGROUPS:
            assert seen["autogroup"].endswith(" nice 10")
            assert seen["weight"] == "nice 10, own session's autogroup at nice 10"
    finally:
        driven.close()


def test_nice_zero_changes_nothing() -> None:
    driven = Driven(0, "exit 0")
    seen = driven.seen
    assert seen["pid"] == driven.proc.pid
    assert seen["nice"] == os.getpriority(os.PRIO_PROCESS, 0)
    assert seen["weight"] is None
    assert driven.wait() == 0


def test_without_autogroups_only_the_nice_value_changes(tmp_path: Path) -> None:
    switch = tmp_path / "sched_autogroup_enabled"
    switch.write_text("0\n")
    driven = Driven(10, "exit 0", str(switch))
    seen = driven.seen
    assert seen["pid"] == driven.proc.pid
    assert seen["nice"] == 10
    assert seen["weight"] == "nice 10"
    assert seen["autogroup"] == _own_autogroup()  # the caller's, untouched
    assert driven.wait() == 0


def test_a_higher_nice_value_is_kept() -> None:
    driven = Driven(10, "exit 0", preexec_fn=lambda: os.nice(15))
    assert driven.seen["nice"] == 15
    assert driven.wait() == 0


@pytest.fixture
def own_cpu_cgroup() -> Iterator[Path]:
    """A CPU cgroup below the root, made for the test and removed after it."""
    reason = None
    if CPU_HIERARCHY is None:
        reason = "no CPU cgroup hierarchy to make a cgroup in"
    else:
        group = CPU_HIERARCHY / f"zun-test-{uuid.uuid4().hex[:12]}"
        try:
            group.mkdir()
        except OSError as exc:
            reason = f"cannot make a CPU cgroup in {CPU_HIERARCHY}: {exc.strerror}"
    if reason is not None:
        if in_ci():
            pytest.fail(f"{reason} (CI=true: required, not skipped)", pytrace=False)
        pytest.skip(reason)
    try:
        yield group
    finally:
        deadline = time.monotonic() + 10
        while True:  # a task that just exited leaves the cgroup a moment later
            try:
                group.rmdir()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)


def test_in_a_cpu_cgroup_of_its_own_only_the_nice_value_changes(own_cpu_cgroup: Path) -> None:
    """The kernel weighs a cgroup's tasks by the cgroup, not by session: no fork, no autogroup
    written, and the log line says which cgroup decides."""
    callers_group = _own_autogroup()
    driven = Driven(10, "exit 0", cgroup=own_cpu_cgroup)
    seen = driven.seen
    assert seen["pid"] == driven.proc.pid
    assert seen["sid"] == os.getsid(0)
    assert seen["nice"] == 10
    assert seen["autogroup"] == callers_group
    assert seen["weight"] == f"nice 10 (in cpu cgroup /{own_cpu_cgroup.name}, whose weight counts)"
    assert driven.wait() == 0


def test_a_session_leader_in_a_cpu_cgroup_leaves_its_autogroup_alone(own_cpu_cgroup: Path) -> None:
    driven = Driven(10, "wait", cgroup=own_cpu_cgroup, start_new_session=True)
    try:
        seen = driven.seen
        assert seen["pid"] == driven.proc.pid == seen["sid"]
        assert seen["nice"] == 10
        assert not seen["autogroup"].endswith(" nice 10")
    finally:
        driven.close()


@pytest.mark.parametrize(
    ("cgroup", "subtree", "expected"),
    [
        # cgroup v1 or hybrid: the cpu hierarchy's line decides, the unified one is ignored
        ("4:memory:/a\n2:cpu,cpuacct:/\n0::/user.slice\n", "cpu", None),
        ("2:cpu,cpuacct:/docker/abc\n0::/\n", "", "/docker/abc"),
        ("3:cpuacct,cpu:/ci\n", "", "/ci"),
        ("garbage\n2:cpu:/ci\n", "", "/ci"),
        # cgroup v2: a cgroup below the root counts when the root hands the cpu controller down
        (
            "0::/system.slice/zun.service\n",
            "cpuset cpu io memory pids",
            "/system.slice/zun.service",
        ),
        ("0::/system.slice/zun.service\n", "memory pids", None),
        ("0::/\n", "cpu", None),
    ],
)
def test_which_cpu_cgroup_a_process_is_in(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cgroup: str,
    subtree: str,
    expected: str | None,
) -> None:
    (tmp_path / "cgroup").write_text(cgroup)
    (tmp_path / "cgroup.subtree_control").write_text(subtree + "\n")
    monkeypatch.setattr(cpu_weight, "CGROUP", tmp_path / "cgroup")
    monkeypatch.setattr(cpu_weight, "CGROUP_V2_ROOT", tmp_path)
    assert cpu_weight.cpu_cgroup() == expected
