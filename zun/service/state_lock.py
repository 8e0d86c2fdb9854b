"""One zun-all per state directory: an exclusive lock file, released by the kernel on exit."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path


class StateDirLocked(Exception):
    pass


class StateLock:
    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "zun-all.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise StateDirLocked(
                    f"Another zun-all (pid {holder}) is already running on state directory "
                    f"{self.path.parent}; stop it first, or give this one another state "
                    "directory (--state-dir or [DEFAULT]/state_path)."
                ) from None
            raise
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
