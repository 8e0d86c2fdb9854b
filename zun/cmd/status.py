"""zun-status upgrade check: is this deployment ready to run this release?

Exit codes follow the OpenStack convention: 0 success, 1 warning, 2 failure.
"""

from __future__ import annotations

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
        return FAILURE, (f"The database schema is at {current}, this release needs {head}: "
                         "run `zun-db-manage upgrade`.")
    return SUCCESS, f"Database schema is at head ({head})."


def _check_auth_key() -> tuple[int, str]:
    from zun.conf import CONF

    if not CONF.auth_encryption_key:
        return WARNING, ("[DEFAULT]/auth_encryption_key is empty: registry passwords cannot be "
                         "stored.")
    return SUCCESS, "auth_encryption_key is set."


CHECKS = (("Database schema", _check_database), ("Registry password key", _check_auth_key))


SUBCOMMAND = ["upgrade", "check"]
USAGE = "usage: zun-status [--config-file FILE ...] upgrade check [--config-file FILE ...]"


def split_subcommand(args: list[str]) -> list[str] | None:
    """The options around ``upgrade check`` (before it, as oslo.upgradecheck takes them, or
    after it), or None when the subcommand is missing."""
    for i in range(len(args) - 1):
        if args[i:i + 2] == SUBCOMMAND:
            return args[:i] + args[i + 2:]
    return None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv if argv is None else argv)
    options = split_subcommand(argv[1:])
    if options is None:
        print(USAGE, file=sys.stderr)
        return FAILURE
    common.prepare([argv[0], *options])
    worst = SUCCESS
    names = {SUCCESS: "Success", WARNING: "Warning", FAILURE: "Failure"}
    for title, check in CHECKS:
        code, detail = check()
        worst = max(worst, code)
        print(f"{title}: {names[code]}\n  {detail}")
    return worst


if __name__ == "__main__":
    sys.exit(main())
