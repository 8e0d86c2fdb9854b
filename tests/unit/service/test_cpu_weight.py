"""cpu_weight with real processes: the fork into a session of its own, the supervisor that stays
behind (signals, exit status, death), and the cases that change the priority in place."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


class Driven:
    def __init__(self, nice: int, then: str, *extra: str, **popen: object) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", DRIVER, str(nice), then, *extra],
            stdout=subprocess.PIPE,
            text=True,
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


def _own_autogroup_nice() -> str:
    return Path("/proc/self/autogroup").read_text().split()[-1]


def test_started_from_a_shell_it_forks_into_a_session_of_its_own() -> None:
    callers_group = _own_autogroup_nice()
    driven = Driven(10, "wait")
    try:
        seen = driven.seen
        if not AUTOGROUPS:  # no autogroups: a nice value alone weighs against every task
            assert seen["pid"] == driven.proc.pid and seen["nice"] == 10
            return
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
        assert _own_autogroup_nice() == callers_group
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
    assert seen["autogroup"].split()[-1] == _own_autogroup_nice()  # the caller's, untouched
    assert driven.wait() == 0


def test_a_higher_nice_value_is_kept() -> None:
    driven = Driven(10, "exit 0", preexec_fn=lambda: os.nice(15))
    assert driven.seen["nice"] == 15
    assert driven.wait() == 0
