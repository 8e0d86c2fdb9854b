"""The embedded state directory: private to the service's user, with its own secret key.

``zun-all`` keeps its SQLite database (registry passwords inside, encrypted) and the key that
encrypts them under one directory. Both must stay unreadable to other local users, so:

* the directory is mode 0700 (an existing one is narrowed), the database file 0600 (created
  empty with that mode before SQLite opens it, so it is never briefly world-readable; SQLite
  gives its journal the database file's mode);
* the key is 32 random characters in ``<state-dir>/auth_encryption_key``, mode 0600, made on
  the first start and read on every later one.

A key set in configuration (file, command line or environment) always wins over the file: an
operator who moves an existing database keeps its key.
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
import string
from pathlib import Path

from oslo_config import cfg

LOG = logging.getLogger(__name__)

KEY_FILE = "auth_encryption_key"
DB_FILE = "zun.sqlite"
DIR_MODE = 0o700
FILE_MODE = 0o600
# ASCII only: the Fernet key is built from the key's first 32 characters as UTF-8 bytes, so
# 32 single-byte characters make exactly the 32 bytes Fernet needs.
KEY_ALPHABET = string.ascii_letters + string.digits
KEY_LENGTH = 32

# Where an option's value came from when the operator chose it (not a default).
_CONFIGURED = frozenset(
    {
        cfg.Locations.user,
        cfg.Locations.command_line,
        cfg.Locations.environment,
        cfg.Locations.set_override,
    }
)


def _narrow(path: Path, mode: int) -> None:
    current = stat.S_IMODE(path.stat().st_mode)
    if current & ~mode:
        LOG.warning("%s was mode %o, readable by others: narrowing it to %o", path, current, mode)
        path.chmod(mode)


def secure(state_dir: Path, sqlite: bool = True) -> None:
    """Create or narrow the state directory (0700) and, when the database is the SQLite file
    there (``sqlite``), that file (0600)."""
    state_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    _narrow(state_dir, DIR_MODE)
    if not sqlite:
        return
    db_file = state_dir / DB_FILE
    fd = os.open(db_file, os.O_RDWR | os.O_CREAT, FILE_MODE)
    os.close(fd)
    _narrow(db_file, FILE_MODE)
    for suffix in ("-journal", "-wal", "-shm"):
        side = state_dir / (DB_FILE + suffix)
        if side.exists():
            _narrow(side, FILE_MODE)


def read_key(state_dir: Path) -> str | None:
    """The key kept in the state directory, or None when there is none yet."""
    path = state_dir / KEY_FILE
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    _narrow(path, FILE_MODE)
    return text or None


def new_key() -> str:
    return "".join(secrets.choice(KEY_ALPHABET) for _ in range(KEY_LENGTH))


def write_key(state_dir: Path, key: str) -> None:
    """Write ``key`` as the state directory's key; refuses to overwrite an existing one."""
    path = state_dir / KEY_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(key + "\n")
        out.flush()
        os.fsync(out.fileno())


def load_or_create_key(state_dir: Path) -> str:
    key = read_key(state_dir)
    if key is None:
        key = new_key()
        write_key(state_dir, key)
        LOG.info("Made a new secret key in %s", state_dir / KEY_FILE)
    return key


def key_is_configured(conf: cfg.ConfigOpts) -> bool:
    """True when ``[DEFAULT]/auth_encryption_key`` was set by the operator, not defaulted."""
    return conf.get_location("auth_encryption_key").location in _CONFIGURED


def use_state_key(conf: cfg.ConfigOpts, state_dir: Path, create: bool) -> str | None:
    """Make the state directory's key the default of ``auth_encryption_key``.

    A configured key wins and is left alone. ``create``: make the key file when missing
    (zun-all's first start); otherwise a missing file leaves the default untouched. Returns
    where the key in use comes from, for messages.
    """
    if key_is_configured(conf):
        return "configuration"
    key = load_or_create_key(state_dir) if create else read_key(state_dir)
    if key is None:
        return None
    conf.set_default("auth_encryption_key", key)
    return str(state_dir / KEY_FILE)
