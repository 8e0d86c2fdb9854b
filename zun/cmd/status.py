"""zun-status upgrade check: is this deployment ready to run this release?

    zun-status upgrade check [--config-file zun.conf] [--state-dir DIR]

``--state-dir`` checks an embedded ``zun-all``'s state directory (its database and its key).
Exit codes follow the OpenStack convention: 0 success, 1 warning, 2 failure.
"""

from __future__ import annotations

import argparse
import sys

from zun.cmd import common

SUCCESS, WARNING, FAILURE = 0, 1, 2


def _check_database() -> tuple[int, str]:
    from zun.db import migration

    try:
        current = migration.version()
        head = migration.head()
    except Exception as exc:  # the point of the check is to report any failure
        return FAILURE, f"Cannot read the database schema version: {exc}"
    if current is None:
        return FAILURE, "The database has no schema yet: run `zun-db-manage upgrade`."
    if current != head:
        return FAILURE, (
            f"The database schema is at {current}, this release needs {head}: "
            "run `zun-db-manage upgrade`."
        )
    return SUCCESS, f"Database schema is at head ({head})."


def _rows_by_key() -> tuple[int, int] | None:
    """(rows still under the public default key, rows no known key opens); None: no DB."""
    import sqlalchemy as sa

    from zun.common import crypt
    from zun.conf import CONF
    from zun.db import engine as db_engine
    from zun.db import models

    try:
        engine = db_engine.create_engine(db_engine.connection_url(conf=CONF), CONF)
    except Exception:  # the database check reports why
        return None
    try:
        with engine.connect() as conn:
            tokens = (
                conn.execute(
                    sa.select(models.Registry.password).where(models.Registry.password.is_not(None))
                )
                .scalars()
                .all()
            )
    except Exception:
        return None
    finally:
        engine.dispose()
    current = str(CONF.auth_encryption_key or "")
    legacy = unreadable = 0
    for token in tokens:
        if current and current != crypt.DEFAULT_KEY and crypt.opens_with(token, current):
            continue
        if crypt.opens_with(token, crypt.DEFAULT_KEY):
            legacy += 1
        else:
            unreadable += 1
    return legacy, unreadable


def _check_auth_key() -> tuple[int, str]:
    from zun.common import crypt
    from zun.conf import CONF

    if not CONF.auth_encryption_key:
        return WARNING, (
            "[DEFAULT]/auth_encryption_key is empty: registry passwords cannot be stored."
        )
    if CONF.auth_encryption_key == crypt.DEFAULT_KEY:
        return WARNING, (
            "[DEFAULT]/auth_encryption_key is the public default key: anyone who "
            "reads the database can decrypt registry passwords. Set a key of 32 "
            "random characters, then run `zun-db-manage reencrypt`."
        )
    counts = _rows_by_key()
    if counts is not None:
        legacy, unreadable = counts
        if unreadable:
            return WARNING, (
                f"{unreadable} registry password(s) cannot be decrypted with "
                "[DEFAULT]/auth_encryption_key: was the key changed without "
                "`zun-db-manage reencrypt --old-key-file ...`?"
            )
        if legacy:
            return WARNING, (
                f"{legacy} registry password(s) are still encrypted with the public "
                "default key: run `zun-db-manage reencrypt`."
            )
    return SUCCESS, "auth_encryption_key is set and is not the public default."


CHECKS = (("Database schema", _check_database), ("Registry password key", _check_auth_key))


SUBCOMMAND = ["upgrade", "check"]
USAGE = (
    "usage: zun-status [--config-file FILE ...] upgrade check [--config-file FILE ...] "
    "[--state-dir DIR]"
)


def split_subcommand(args: list[str]) -> list[str] | None:
    """The options around ``upgrade check`` (before it, as oslo.upgradecheck takes them, or
    after it), or None when the subcommand is missing."""
    for i in range(len(args) - 1):
        if args[i : i + 2] == SUBCOMMAND:
            return args[:i] + args[i + 2 :]
    return None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv if argv is None else argv)
    options = split_subcommand(argv[1:])
    if options is None:
        print(USAGE, file=sys.stderr)
        return FAILURE
    parser = argparse.ArgumentParser(prog="zun-status", add_help=False)
    parser.add_argument("--state-dir", default=None)
    own, rest = parser.parse_known_args(options)
    if own.state_dir:
        from zun.cmd.all import apply_embedded_defaults

        apply_embedded_defaults()
    common.prepare([argv[0], *rest], default_config_files=[] if own.state_dir else None)
    if own.state_dir:
        from zun.cmd.all import resolve_state_dir
        from zun.conf import CONF
        from zun.service import state_dir as state_files

        state_files.use_state_key(CONF, resolve_state_dir(own.state_dir), create=False)
    worst = SUCCESS
    names = {SUCCESS: "Success", WARNING: "Warning", FAILURE: "Failure"}
    for title, check in CHECKS:
        code, detail = check()
        worst = max(worst, code)
        print(f"{title}: {names[code]}\n  {detail}")
    return worst


if __name__ == "__main__":
    sys.exit(main())
