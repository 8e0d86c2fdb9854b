"""Column types shared by the models and the migrations.

Zun keeps structured values (labels, environment, addresses, ...) as JSON inside TEXT columns,
so an existing Zun database can be read as is. :class:`JSONText` does the encoding; the
``JSONDict``/``JSONList`` helpers add in-place change tracking so ``c.labels["a"] = "b"`` is
noticed by the session (top-level changes only; replace nested values to persist them).
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.mutable import MutableDict, MutableList

# The C scanner behind json.loads, called directly: json.loads spends most of its time on a
# short value in two Python layers and two whitespace regexes. Used only when it consumed the
# whole text, so the result is exactly json.loads' (anything else goes through json.loads).
_SCAN_ONCE = json.JSONDecoder().scan_once


def loads(text: str) -> Any:
    """``json.loads(text)``, faster for the short values rows hold."""
    try:
        value, end = _SCAN_ONCE(text, 0)
    except StopIteration:
        return json.loads(text)
    if end != len(text):
        return json.loads(text)
    return value


def decode(text: str | None) -> Any:
    """A stored JSON column's value: ``None`` for NULL, the raw text when it is not JSON."""
    if text is None:
        return None
    try:
        return loads(text)
    except ValueError:
        return text


# MySQL and MariaDB are distinct dialect names in SQLAlchemy 2; a variant must name both.
_MYSQL_DIALECTS = ("mysql", "mariadb")


def medium_text() -> sa.types.TypeEngine[str]:
    """TEXT everywhere, MEDIUMTEXT on MySQL/MariaDB (TEXT there is limited to 64 KiB)."""
    return sa.Text().with_variant(mysql.MEDIUMTEXT(), *_MYSQL_DIALECTS)


class JSONText(sa.types.TypeDecorator[Any]):
    """A JSON value stored in a TEXT (or MEDIUMTEXT) column.

    ``None`` is stored as SQL NULL so that "unset" and "empty" stay distinct. Values that are
    not valid JSON (rows written by very old Zun releases, e.g. a plain command string) are
    returned as the raw string rather than failing the whole query.
    """

    impl = sa.Text
    cache_ok = True

    def __init__(self, medium: bool = False) -> None:
        super().__init__()
        self.medium = medium

    def load_dialect_impl(self, dialect: Dialect) -> sa.types.TypeEngine[Any]:
        # Plain type objects, not dialect.type_descriptor(): on psycopg that turns Text into
        # the driver's string type, which renders as VARCHAR in DDL.
        if self.medium and dialect.name in _MYSQL_DIALECTS:
            return mysql.MEDIUMTEXT()
        return self.impl_instance

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        if value is None:
            return None
        return json.dumps(value, separators=(",", ":"))

    def process_result_value(self, value: str | None, dialect: Dialect) -> Any:
        return decode(value)

    def coerce_compared_value(self, op: Any, value: Any) -> sa.types.TypeEngine[Any]:
        # Comparisons such as `labels LIKE '%x%'` bind plain strings, not JSON.
        return self.impl_instance


def JSONDict(medium: bool = False) -> sa.types.TypeEngine[Any]:
    """A dict in a JSON TEXT column, with top-level mutation tracking."""
    return MutableDict.as_mutable(JSONText(medium))


def JSONList(medium: bool = False) -> sa.types.TypeEngine[Any]:
    """A list in a JSON TEXT column, with top-level mutation tracking."""
    return MutableList.as_mutable(JSONText(medium))
