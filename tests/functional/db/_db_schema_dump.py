"""Parse MariaDB ``CREATE TABLE`` statements (mysqldump / SHOW CREATE TABLE) into plain data.

The reference dump and a live database are both read through :func:`parse_create_table`, so
they are compared on the same terms. The parser is strict: a line it does not understand is an
error, never silently skipped, so nothing in either schema escapes the comparison.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymysql
import sqlalchemy as sa
from reference import reference_path

_REPO_ROOT = Path(__file__).resolve().parents[3]


def reference_dump_path() -> Path:
    return reference_path("db-schema-mariadb.sql")


@dataclass
class Column:
    type: str
    nullable: bool
    default: str | None
    extra: str  # AUTO_INCREMENT or ""


@dataclass
class Table:
    name: str
    columns: dict[str, Column] = field(default_factory=dict)
    column_order: list[str] = field(default_factory=list)
    primary_key: tuple[str, ...] = ()
    unique_keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # name -> (columns, referenced table, referenced columns, ON DELETE action or "")
    foreign_keys: dict[str, tuple[tuple[str, ...], str, tuple[str, ...], str]] = field(
        default_factory=dict
    )
    options: str = ""


_CREATE_RE = re.compile(r"CREATE TABLE `(?P<name>\w+)` \((?P<body>.*?)\n\)(?P<opts>[^;]*);", re.S)
_COLUMN_RE = re.compile(
    r"^`(?P<name>\w+)` (?P<type>[a-z]+(?:\([\d,]+\))?(?: unsigned)?)"
    r"(?P<notnull> NOT NULL)?(?: DEFAULT (?P<default>'[^']*'|\S+))?"
    r"(?P<extra> AUTO_INCREMENT)?$"
)
_PK_RE = re.compile(r"^PRIMARY KEY \((?P<cols>[^)]*)\)$")
_KEY_RE = re.compile(r"^(?P<unique>UNIQUE )?KEY `(?P<name>\w+)` \((?P<cols>[^)]*)\)$")
_FK_RE = re.compile(
    r"^CONSTRAINT `(?P<name>\w+)` FOREIGN KEY \((?P<cols>[^)]*)\) "
    r"REFERENCES `(?P<ref>\w+)` \((?P<refcols>[^)]*)\)(?: ON DELETE (?P<ondelete>[A-Z ]+?))?$"
)


def _cols(text: str) -> tuple[str, ...]:
    return tuple(c.strip().strip("`") for c in text.split(","))


def parse_create_table(statement: str) -> Table:
    match = _CREATE_RE.search(statement if statement.rstrip().endswith(";") else statement + ";")
    if match is None:
        raise ValueError(f"not a CREATE TABLE statement: {statement[:80]!r}")
    table = Table(match["name"], options=match["opts"].strip())
    for raw in match["body"].strip().splitlines():
        line = raw.strip().rstrip(",")
        if m := _COLUMN_RE.match(line):
            default = m["default"]
            if default is not None and default.startswith("'"):
                default = default[1:-1]
            table.columns[m["name"]] = Column(
                m["type"], m["notnull"] is None, default, (m["extra"] or "").strip()
            )
            table.column_order.append(m["name"])
        elif m := _PK_RE.match(line):
            table.primary_key = _cols(m["cols"])
        elif m := _KEY_RE.match(line):
            target = table.unique_keys if m["unique"] else table.keys
            target[m["name"]] = _cols(m["cols"])
        elif m := _FK_RE.match(line):
            table.foreign_keys[m["name"]] = (
                _cols(m["cols"]),
                m["ref"],
                _cols(m["refcols"]),
                m["ondelete"] or "",
            )
        else:
            raise ValueError(f"{table.name}: line not understood: {line!r}")
    return table


def parse_dump(text: str) -> dict[str, Table]:
    """Every table of a mysqldump --compact --no-data output, by name."""
    tables = {}
    for match in _CREATE_RE.finditer(text):
        table = parse_create_table(match.group(0))
        tables[table.name] = table
    return tables


def create_statements(text: str) -> list[str]:
    """The CREATE TABLE statements of a dump, as they appear."""
    return [m.group(0) for m in _CREATE_RE.finditer(text)]


def connect_mariadb(url: str) -> Any:
    """A plain PyMySQL connection to the database of a SQLAlchemy URL."""
    parsed = sa.make_url(url)
    return pymysql.connect(
        host=parsed.host,
        port=parsed.port or 3306,
        user=parsed.username,
        password=parsed.password or "",
        database=parsed.database,
    )


def live_tables(url: str) -> dict[str, Table]:
    """Every table of a live MariaDB database, parsed from SHOW CREATE TABLE."""
    conn = connect_mariadb(url)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW TABLES")
            names = [row[0] for row in cur.fetchall()]
            tables = {}
            for name in names:
                cur.execute(f"SHOW CREATE TABLE `{name}`")
                tables[name] = parse_create_table(cur.fetchone()[1])
    finally:
        conn.close()
    # mysqldump for the reference dropped AUTO_INCREMENT=N counters; so do we.
    for table in tables.values():
        table.options = " ".join(p for p in table.options.split() if "AUTO_INCREMENT=" not in p)
    return tables


def schema_differences(
    expected: dict[str, Table],
    actual: dict[str, Table],
    extra_keys: dict[str, dict[str, tuple[str, ...]]] | None = None,
    extra_columns: dict[str, dict[str, Column]] | None = None,
) -> list[str]:
    """Every difference, as readable lines; empty when the schemas are the same.

    ``extra_columns``: per table, columns ``actual`` must have after all of ``expected``'s,
    in this order and with these definitions (our revisions append them)."""
    extra_keys = extra_keys or {}
    extra_columns = extra_columns or {}
    problems: list[str] = []
    if extra_columns:
        actual = {
            name: _without_columns(table, extra_columns.get(name, {}), problems)
            for name, table in actual.items()
        }
    if set(expected) != set(actual):
        problems.append(
            f"tables: missing {sorted(set(expected) - set(actual))}, "
            f"unexpected {sorted(set(actual) - set(expected))}"
        )
    for name in sorted(set(expected) & set(actual)):
        exp, act = expected[name], actual[name]
        if exp.column_order != act.column_order:
            problems.append(f"{name}: column order {act.column_order} != {exp.column_order}")
        for col in sorted(set(exp.columns) | set(act.columns)):
            if exp.columns.get(col) != act.columns.get(col):
                problems.append(
                    f"{name}.{col}: got {act.columns.get(col)}, want {exp.columns.get(col)}"
                )
        if exp.primary_key != act.primary_key:
            problems.append(f"{name}: primary key {act.primary_key} != {exp.primary_key}")
        if exp.unique_keys != act.unique_keys:
            problems.append(f"{name}: unique keys {act.unique_keys} != {exp.unique_keys}")
        allowed = extra_keys.get(name, {})
        for key, cols in allowed.items():
            if act.keys.get(key) != cols:
                problems.append(f"{name}: expected extra key {key} {cols}, got {act.keys.get(key)}")
        act_keys = {k: v for k, v in act.keys.items() if k not in allowed}
        if exp.keys != act_keys:
            problems.append(f"{name}: keys {act_keys} != {exp.keys}")
        if exp.foreign_keys != act.foreign_keys:
            problems.append(f"{name}: foreign keys {act.foreign_keys} != {exp.foreign_keys}")
        if exp.options != act.options:
            problems.append(f"{name}: table options {act.options!r} != {exp.options!r}")
    return problems


def _without_columns(table: Table, extra: dict[str, Column], problems: list[str]) -> Table:
    """``table`` less the ``extra`` columns, which must end it, in order, as defined."""
    if not extra:
        return table
    tail = table.column_order[-len(extra) :]
    if tail != list(extra):
        problems.append(
            f"{table.name}: expected extra columns {list(extra)} at the end, got {tail}"
        )
    for name, want in extra.items():
        if table.columns.get(name) != want:
            problems.append(f"{table.name}.{name}: got {table.columns.get(name)}, want {want}")
    return Table(
        name=table.name,
        columns={k: v for k, v in table.columns.items() if k not in extra},
        column_order=[c for c in table.column_order if c not in extra],
        primary_key=table.primary_key,
        unique_keys=table.unique_keys,
        keys=table.keys,
        foreign_keys=table.foreign_keys,
        options=table.options,
    )
