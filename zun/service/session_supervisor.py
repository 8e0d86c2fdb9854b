"""The parent zun-all leaves behind when it forks into a session of its own (``cpu_weight``).

    python -S session_supervisor.py CHILD_PID [-- ORIGINAL ARGV ...]

Execed by that parent, so what stays in the caller's session is a bare interpreter (about 9 MB
resident, most of it shared) rather than a copy of zun-all's. It passes every stop signal to the
child, waits for it, and ends as the child ended: same exit status, or killed by the same signal.
The child is SIGKILLed by the kernel if this process dies (its ``PR_SET_PDEATHSIG``). The
original command line is kept after ``--`` only so that ``ps`` and ``pgrep`` show what this is.

Standard library only: it runs with ``-S``, without the site packages.
"""

from __future__ import annotations

import os
import signal
import sys

# SIGKILL and SIGSTOP cannot be caught: the death signal and the caller's job control cover them.
FORWARDED = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)


def supervise(child: int) -> int:
    """Forward, wait, and return the child's exit code; dies of the child's signal instead when
    it was killed by one. The caller blocks ``FORWARDED`` before the fork: unblocked here, once
    the handlers are in place, so no signal is lost in between."""

    def _forward(signum: int, _frame: object) -> None:
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    for sig in FORWARDED:
        signal.signal(sig, _forward)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
    _, status = os.waitpid(child, 0)  # Python retries it after each forwarded signal
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        os.kill(os.getpid(), sig)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(supervise(int(sys.argv[1])))
