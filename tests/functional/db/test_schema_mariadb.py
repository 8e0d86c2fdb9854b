"""Our migrations build, on MariaDB, exactly the schema of tests/contract/db-schema-mariadb.sql.

Both sides go through the same strict parser (SHOW CREATE TABLE on the live side), and the
columns are checked a second time through information_schema.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from _db_schema_dump import (
    Column,
    Table,
    connect_mariadb,
    live_tables,
    parse_dump,
    reference_dump_path,
    schema_differences,
)

from zun.db import migration

pytestmark = pytest.mark.mariadb

# Indexes our later revisions add on top of Zun's schema (documented in their revisions).
EXTRA_KEYS_AT_HEAD = {
    "container": {"ix_container_host": ("host",), "ix_container_project_id": ("project_id",)},
}

# Columns our later revisions append to Zun's tables (documented in their revisions).
EXTRA_COLUMNS_AT_HEAD = {
    "compute_node": {
        **{
            name: Column("float", True, "NULL", "")
            for name in ("cpu_allocation_ratio", "ram_allocation_ratio", "disk_allocation_ratio")
        },
        **{
            name: Column("int(11)", True, "NULL", "")
            for name in ("reserved_host_cpus", "reserved_host_memory_mb", "reserved_host_disk_mb")
        },
    },
}


# Tables our later revisions add (documented in their revisions): not compared with Zun's.
EXTRA_TABLES_AT_HEAD = {"zun_lease"}


def zun_tables(url: str) -> dict[str, Table]:
    """The live tables of head, without (but asserting) the ones Zun never had."""
    tables = live_tables(url)
    assert EXTRA_TABLES_AT_HEAD <= set(tables)
    return {name: table for name, table in tables.items() if name not in EXTRA_TABLES_AT_HEAD}


@pytest.fixture(scope="module")
def reference() -> dict[str, Table]:
    return parse_dump(reference_dump_path().read_text())


def test_base_revision_is_zuns_schema_exactly(
    mariadb_url: Callable[[], str], reference: dict[str, Table]
) -> None:
    url = mariadb_url()
    migration.upgrade(migration.BASE_REVISION, url=url)

    assert schema_differences(reference, live_tables(url)) == []


def test_head_is_zuns_schema_plus_documented_indexes(
    mariadb_url: Callable[[], str], reference: dict[str, Table]
) -> None:
    url = mariadb_url()
    migration.upgrade("head", url=url)

    assert migration.version(url=url) == migration.head()
    assert (
        schema_differences(reference, zun_tables(url), EXTRA_KEYS_AT_HEAD, EXTRA_COLUMNS_AT_HEAD)
        == []
    )


def test_comparison_notices_a_difference(
    mariadb_url: Callable[[], str], reference: dict[str, Table]
) -> None:
    # Without the allowances, head differs from Zun's schema by our two indexes and our
    # compute_node columns: proof that the comparison above looks at keys and columns at all.
    url = mariadb_url()
    migration.upgrade("head", url=url)

    problems = schema_differences(reference, zun_tables(url), None, EXTRA_COLUMNS_AT_HEAD)
    assert len(problems) == 1 and "ix_container_host" in problems[0]
    problems = schema_differences(reference, zun_tables(url), EXTRA_KEYS_AT_HEAD)
    assert len(problems) == 7 and "column order" in problems[0]
    assert all("compute_node" in p for p in problems)


def test_columns_match_through_information_schema(
    mariadb_url: Callable[[], str], reference: dict[str, Table]
) -> None:
    url = mariadb_url()
    migration.upgrade("head", url=url)
    conn = connect_mariadb(url)
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA "
                "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()"
            )
            rows = cur.fetchall()
    finally:
        conn.close()

    live = {
        (t, c): (ctype, nullable == "YES", default, extra.upper())
        for t, c, ctype, nullable, default, extra in rows
        if t not in EXTRA_TABLES_AT_HEAD
    }
    expected = {
        (t.name, name): (col.type, col.nullable, col.default, col.extra)
        for t in reference.values()
        for name, col in t.columns.items()
    }
    assert len(expected) == 238
    expected.update(
        {
            (table, name): (col.type, col.nullable, col.default, col.extra)
            for table, columns in EXTRA_COLUMNS_AT_HEAD.items()
            for name, col in columns.items()
        }
    )
    assert live == expected
