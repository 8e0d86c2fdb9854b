"""zun-db-manage: create or move Zun's database schema.

    zun-db-manage [--config-file zun.conf] upgrade [REVISION]     (default: head)
    zun-db-manage [--config-file zun.conf] version
    zun-db-manage [--config-file zun.conf] stamp REVISION
    zun-db-manage [--config-file zun.conf] revision -m MESSAGE [--autogenerate]
    zun-db-manage [--config-file zun.conf] reencrypt [--old-key-file F]... [--state-dir DIR]

The database is ``[database]/connection``. ``reencrypt`` rewrites the registry passwords under
the key in use (``[DEFAULT]/auth_encryption_key``, or with ``--state-dir`` the embedded state
directory's key, made if missing), opening each with that key, an ``--old-key-file`` or Zun's
public default key. A database made by OpenStack Zun at its last
revision (3f2b36231bee) is at our first one, so ``upgrade`` works on it directly.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from oslo_config import cfg
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from zun.conf import CONF, parse_args
from zun.db import engine as db_engine
from zun.db import migration


def _add_parsers(subparsers: argparse._SubParsersAction) -> None:
    upgrade = subparsers.add_parser("upgrade", help="upgrade the schema (default: to head)")
    upgrade.add_argument("revision", nargs="?", default="head")

    subparsers.add_parser("version", help="print the current revision")

    stamp = subparsers.add_parser("stamp", help="record a revision without running it")
    stamp.add_argument("revision")

    revision = subparsers.add_parser("revision", help="write a new migration file")
    revision.add_argument("-m", "--message", required=True)
    revision.add_argument(
        "--autogenerate",
        action="store_true",
        help="fill it with the differences between the models and the database",
    )

    reencrypt = subparsers.add_parser(
        "reencrypt", help="re-encrypt registry passwords under the key in use"
    )
    reencrypt.add_argument(
        "--old-key-file",
        action="append",
        default=[],
        help="a file holding a previous key (repeatable)",
    )
    reencrypt.add_argument(
        "--state-dir",
        default=None,
        help="an embedded zun-all state directory: its database and key",
    )


COMMAND_OPT = cfg.SubCommandOpt(
    "command", title="Commands", help="what to do", handler=_add_parsers
)


def _engine() -> Engine:
    return db_engine.create_engine(db_engine.connection_url(conf=CONF), CONF)


def _reencrypt(command: Any) -> int:
    from zun.common import crypt
    from zun.db.queries import registries
    from zun.service import state_dir as state_files

    if command.state_dir:
        state_dir = Path(command.state_dir).resolve()
        CONF.set_default(
            "connection", f"sqlite:///{state_dir / state_files.DB_FILE}", group="database"
        )
        state_files.use_state_key(CONF, state_dir, create=True)
    new_key = str(CONF.auth_encryption_key or "")
    if not new_key or new_key == crypt.DEFAULT_KEY:
        print(
            "zun-db-manage: set [DEFAULT]/auth_encryption_key to a key of your own first "
            "(the public default protects nothing)",
            file=sys.stderr,
        )
        return 1
    old_keys = [Path(f).read_text().strip() for f in command.old_key_file]
    engine = _engine()
    try:
        with Session(engine) as session, session.begin():
            changed, unreadable = registries.reencrypt_passwords(session, old_keys, new_key)
    finally:
        engine.dispose()
    print(f"{changed} registry password(s) re-encrypted")
    if unreadable:
        print(
            f"{len(unreadable)} registry password(s) could not be decrypted with any key "
            f"given, left unchanged: {', '.join(unreadable)}",
            file=sys.stderr,
        )
        return 1
    return 0


def run(command: Any) -> int:
    """Carry out the parsed sub-command; returns the exit status."""
    name = command.name
    if name == "reencrypt":
        return _reencrypt(command)
    if name == "revision":
        # Without autogenerate the database is not needed (nor opened).
        if command.autogenerate:
            engine = _engine()
            try:
                rev = migration.revision(command.message, True, engine=engine)
            finally:
                engine.dispose()
        else:
            rev = migration.revision(command.message)
        print(rev)
        return 0
    engine = _engine()
    try:
        if name == "upgrade":
            migration.upgrade(command.revision, engine=engine)
        elif name == "stamp":
            migration.stamp(command.revision, engine=engine)
        elif name == "version":
            print(migration.version(engine=engine) or "None")
        else:  # argparse only lets the commands above through
            raise AssertionError(name)
    finally:
        engine.dispose()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv if argv is None else argv)
    CONF.register_cli_opt(COMMAND_OPT)
    parse_args(argv)
    try:
        return run(CONF.command)
    except RuntimeError as exc:  # e.g. no [database]/connection
        print(f"zun-db-manage: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
