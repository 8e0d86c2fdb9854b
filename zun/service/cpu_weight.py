"""zun-all's CPU weight against Docker: its own scheduling autogroup at a nice value.

In the embedded mode the API's answers, the node's steps and Docker's container starts share
the same cores. Measured on two cores, ten parallel creates polled every 20 ms spent a third of
their time waiting behind the polls (docs/architecture.md, *Performance*); at nice 10 the polls
wait instead, and the creates run as fast as unpolled ones. The containers and the engine that
runs them come first; the control plane takes what is left, which on an idle host is all of it.

With the kernel's autogroups (the default), a nice value weighs only against tasks of the same
session: CPU time is shared between sessions first. So zun-all needs a session of its own. (A
process in a CPU cgroup other than the root, such as a systemd unit's, is weighed by its cgroup
instead: there it only lowers its nice value, and the cgroup's weight is the operator's.) A
process that already leads its session (started by a service manager, ``setsid`` or as a
container's first process) sets its autogroup's nice in place. Any other (started from a shell
or a script) forks: the child leaves the caller's session and runs the service; the parent stays
where it was, hands every stop signal to the child and exits with the child's status, so the
caller sees one process that stops, and dies, like the service. The child is SIGKILLed if the
parent is (``PR_SET_PDEATHSIG``), so killing zun-all still kills it, as a crash would. The parent
execs a bare interpreter for that (``session_supervisor``), keeping nothing of zun in memory.

Imports only the standard library: it runs before anything heavy is loaded.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from pathlib import Path

from zun.service import session_supervisor
from zun.service.session_supervisor import FORWARDED

AUTOGROUP = Path("/proc/self/autogroup")
AUTOGROUP_SWITCH = Path("/proc/sys/kernel/sched_autogroup_enabled")
CGROUP = Path("/proc/self/cgroup")
CGROUP_V2_ROOT = Path("/sys/fs/cgroup")
_PR_SET_PDEATHSIG = 1


def autogroups_enabled() -> bool:
    try:
        return AUTOGROUP_SWITCH.read_text().strip() == "1" and AUTOGROUP.exists()
    except OSError:
        return False


def cpu_cgroup() -> str | None:
    """This process's cgroup of the CPU controller when it is not the root one (None at the
    root, or when it cannot be told). The kernel schedules by autogroup only the tasks of the
    root CPU cgroup: a task in another one (a systemd unit, a container, a CI runner's group)
    shares the CPU by that cgroup's weight, whatever its session."""
    try:
        lines = CGROUP.read_text().splitlines()
    except OSError:
        return None
    unified = None
    for line in lines:
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        _, controllers, path = fields
        if "cpu" in controllers.split(","):  # cgroup v1 (or hybrid): the cpu hierarchy decides
            return None if path == "/" else path
        if controllers == "":
            unified = path
    if unified in (None, "/"):
        return None
    try:  # cgroup v2: below the root, the cpu controller applies once the root hands it down
        handed_down = (CGROUP_V2_ROOT / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return unified if "cpu" in handed_down else None


def leads_its_session() -> bool:
    return os.getsid(0) == os.getpid()


def apply(nice: int, *, autogroup: bool = True) -> str:
    """Lower this process to ``nice`` (never raise it), and with ``autogroup`` its autogroup
    too when it leads its session (another session's autogroup is the caller's shell: left
    alone). Call before any thread starts: on Linux a nice value is per thread, and new threads
    inherit it. Returns what was done, for the log."""
    done = []
    if os.getpriority(os.PRIO_PROCESS, 0) < nice:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    done.append(f"nice {os.getpriority(os.PRIO_PROCESS, 0)}")
    if autogroup and leads_its_session() and autogroups_enabled():
        try:
            AUTOGROUP.write_text(str(nice))
            done.append(f"own session's autogroup at nice {nice}")
        except OSError as exc:  # another owner's session, or a read-only /proc
            done.append(f"autogroup unchanged ({exc.strerror})")
    return ", ".join(done)


def enter_own_session(nice: int) -> str | None:
    """Arrange for the rest of this process's life to run at CPU weight ``nice`` (see the
    module's docstring). Returns, in the process that goes on to run the service, what was done
    (None when ``nice`` is 0 or less: nothing is changed); the parent of a fork never returns
    from here, it exits with its child's status."""
    if nice <= 0:
        return None
    group = cpu_cgroup()
    if group is not None:  # a session of its own would change nothing
        return apply(nice, autogroup=False) + f" (in cpu cgroup {group}, whose weight counts)"
    if leads_its_session() or not autogroups_enabled():
        return apply(nice)
    parent = os.getpid()
    previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
    child = os.fork()
    if child == 0:
        os.setsid()
        _die_with(parent)
        signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
        return apply(nice) + f", forked from pid {parent}"
    _become_supervisor(child)


def _become_supervisor(child: int) -> None:
    """Exec the supervisor (the blocked signals stay blocked across exec until it has its
    handlers); in the unlikely case there is no interpreter to exec, supervise from here."""
    script = session_supervisor.__file__
    if sys.executable and script:
        argv = [sys.executable, "-S", "-E", "-s", script, str(child), "--", *sys.argv]
        try:
            os.execv(sys.executable, argv)
        except OSError:
            pass
    sys.exit(session_supervisor.supervise(child))


def _die_with(parent: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(1)
