"""zun-db-manage: create or move Zun's database schema.

    zun-db-manage [--config-file zun.conf] upgrade [REVISION]     (default: head)
    zun-db-manage [--config-file zun.conf] version
    zun-db-manage [--config-file zun.conf] stamp REVISION
    zun-db-manage [--config-file zun.conf] revision -m MESSAGE [--autogenerate]

The database is ``[database]/connection``. A database made by OpenStack Zun at its last
revision (3f2b36231bee) is at our first one, so ``upgrade`` works on it directly.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from oslo_config import cfg
from sqlalchemy.engine import Engine

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


COMMAND_OPT = cfg.SubCommandOpt(
    "command", title="Commands", help="what to do", handler=_add_parsers
)


def _engine() -> Engine:
    return db_engine.create_engine(db_engine.connection_url(conf=CONF), CONF)


def run(command: Any) -> int:
    """Carry out the parsed sub-command; returns the exit status."""
    name = command.name
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
